package io.outboxrelay.connector;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The source offset of a relay record: it names the rows its task handed to Connect and has not stamped
 * (docs/exactly-once.md, 3.3), {@code {"v": 1, "owner": …, "tasks": …, "pending": "<runs>", "subscriptions": "<names>"}}, in the task's
 * slot partition {@code {"outbox.slot": "<table>#<relay index>/<relay task count>"}}. A record's offset names the first
 * {@code count} seqs of its claim's {@link BatchOffsets}, computed when Connect first reads it
 * ({@link io.outboxrelay.common.ComputedOffset}).
 */
final class PendingOffset {
    static final String SLOT_KEY = "outbox.slot";
    static final int VERSION = 1;
    /**
     * Names per value at the most: far above a claim (10,000 rows), and with any spread of seqs under the
     * offsets topic's 1 MB record limit. Leaving a name out can only mean a row produced again.
     */
    static final int MAX_NAMES = 50_000;

    private PendingOffset() {
    }

    /**
     * The source partition of relay task {@code relayIndex} of a generation of {@code relayTasks}: one entry, so its
     * JSON form has one spelling. The count is in it so that no task of a generation of another count writes it: after
     * a crash and a change of the count, a new task would otherwise overwrite an old task's slot before a sibling whose
     * share holds some of the rows it names has read it (docs/exactly-once.md, 3.5). Tasks of one count have the same
     * shares in every generation, so the one task that needs a slot of its own count reads it before it writes it.
     */
    static Map<String, Object> slot(String table, int relayIndex, int relayTasks) {
        return Map.of(SLOT_KEY, table + "#" + relayIndex + "/" + relayTasks);
    }

    /** The slot partition versions before 2026-12 wrote, without the count: read at start, never written. */
    static Map<String, Object> slotWithoutCount(String table, int relayIndex) {
        return Map.of(SLOT_KEY, table + "#" + relayIndex);
    }

    /**
     * The offset value naming {@code seqs[0..count)} (a copy is sorted): the last {@link #MAX_NAMES} of them; with
     * {@code subscriptions} (null: left out), the comma-separated names of the subscriptions the task produced to, so
     * that a row stamped from it after a crash is said to be recovered for those only, not for one added since.
     */
    static Map<String, Object> value(String owner, int tasks, String subscriptions, long[] seqs, int count) {
        int from = Math.max(0, count - MAX_NAMES);
        long[] named = Arrays.copyOfRange(seqs, from, count);
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("v", VERSION);
        v.put("owner", owner);
        v.put("tasks", tasks);
        v.put("pending", encode(named, named.length));
        if (subscriptions != null) {
            v.put("subscriptions", subscriptions);
        }
        return v;
    }

    /**
     * {@code seqs[0..count)} as ascending runs, repeats dropped: {@code <gap>} or {@code <gap>+<more>}, the gap
     * being the run's first seq minus the previous run's last (the first run's first seq itself), {@code more}
     * the run's length minus one. {@code 1200..1399, 1405, 1410..1420} is {@code 1200+199,6,5+10}. Sorts
     * {@code seqs[0..count)} in place. A gap is signed (a negative first seq, or a gap past {@code long}'s range,
     * which wraps): {@link #decode} adds it back with the same wrap.
     */
    static String encode(long[] seqs, int count) {
        Arrays.sort(seqs, 0, count);
        StringBuilder out = new StringBuilder(count * 3);
        long previousEnd = 0;
        int i = 0;
        while (i < count) {
            long start = seqs[i];
            long end = start;
            // not seqs[i] <= end + 1: a run that ends at Long.MAX_VALUE must end
            while (i < count && (seqs[i] == end || seqs[i] - 1 == end)) {
                end = Math.max(end, seqs[i++]);
            }
            if (out.length() > 0) {
                out.append(',');
            }
            out.append(start - previousEnd);
            if (end > start) {
                out.append('+').append(end - start);
            }
            previousEnd = end;
        }
        return out.toString();
    }

    /** The seqs of an encoded set, ascending; {@link IllegalArgumentException} when it is not one. */
    static long[] decode(String encoded) {
        if (encoded.isEmpty()) {
            return new long[0];
        }
        String[] runs = encoded.split(",", -1);
        long[] out = new long[16];
        int n = 0;
        long previousEnd = 0;
        for (String run : runs) {
            int plus = run.indexOf('+');
            long gap = number(plus < 0 ? run : run.substring(0, plus), true, encoded);
            long more = plus < 0 ? 0 : number(run.substring(plus + 1), false, encoded);
            long start = previousEnd + gap;
            // ascending runs of at most MAX_NAMES seqs in all, none past Long.MAX_VALUE
            if (n > 0 && (start <= previousEnd || start == previousEnd + 1) || more >= MAX_NAMES - n
                || start + more < start) {
                throw new IllegalArgumentException("not an ascending set of seq runs: " + encoded);
            }
            if (n + more + 1 > out.length) {
                out = Arrays.copyOf(out, Math.max(out.length * 2, (int) (n + more + 1)));
            }
            for (long k = 0; k <= more; k++) {
                out[n++] = start + k;
            }
            previousEnd = start + more;
        }
        return Arrays.copyOf(out, n);
    }

    private static long number(String text, boolean signed, String encoded) {
        String digits = signed && text.startsWith("-") ? text.substring(1) : text;
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("not an ascending set of seq runs: " + encoded);
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an ascending set of seq runs: " + encoded, e);
        }
    }

    /**
     * What a committed slot offset names: the owner whose leases it vouches for, its task count, the seqs, and the
     * subscriptions produced to (null: not said, an offset of a version before it was).
     */
    record Named(String owner, int tasks, long[] seqs, Set<String> subscriptions) {
        /**
         * The names of a committed offset value; null for a value of another shape (the old {@code {"seq": n}},
         * a later version).
         *
         * @throws IllegalArgumentException for a version-1 value whose fields are malformed
         */
        static Named parse(Map<String, Object> value) {
            if (value == null || !(value.get("v") instanceof Number v) || v.intValue() != VERSION) {
                return null;
            }
            if (!(value.get("owner") instanceof String owner) || !(value.get("tasks") instanceof Number tasks)
                || !(value.get("pending") instanceof String pending)) {
                throw new IllegalArgumentException("a version-1 slot offset without owner, tasks and pending: " + value);
            }
            Set<String> subscriptions = value.get("subscriptions") instanceof String s
                ? Set.copyOf(s.isEmpty() ? List.of() : List.of(s.split(",", -1))) : null;
            return new Named(owner, tasks.intValue(), decode(pending), subscriptions);
        }
    }
}
