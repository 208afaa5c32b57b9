package io.outboxrelay.connector.faults;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The one checker every fault scenario ends with: it compares what the source committed with what a
 * topic holds and reports
 * <ul>
 *   <li><b>lost</b>: committed ids the topic does not hold (must be empty in every scenario);</li>
 *   <li><b>duplicated</b>: ids the topic holds more than once (none in a fault-free run; after a crash
 *       bounded by the in-flight window);</li>
 *   <li><b>unexpected</b>: ids on the topic that were never committed (must be empty);</li>
 *   <li><b>stamped but missing</b>: rows whose stamp says "delivered" while the topic does not hold
 *       them, or holds something else at the offset the stamp names (must be empty: a stamp without an
 *       acknowledged record is silent loss);</li>
 *   <li><b>order violations</b>: a key whose first deliveries are not in seq order (checked in
 *       fault-free runs, where per-subject order is promised).</li>
 * </ul>
 * This class is pure: {@link OutboxLedger} and {@link TopicContents} read the two sides.
 */
public final class DeliveryChecker {
    private static final int SHOWN = 20;

    private DeliveryChecker() {
    }

    /** One record found on a topic: the id it carries, its key, its seq (-1 if none) and where it landed. */
    public record Delivered(String id, String key, long seq, int partition, long offset) {
    }

    /** A source row that says it was delivered to the topic; partition and offset -1 when it names none. */
    public record Stamp(String id, int partition, long offset) {
        public static Stamp of(String id) {
            return new Stamp(id, -1, -1);
        }
    }

    /** The comparison for one topic. */
    public record Report(String topic, int committed, int records, SortedSet<String> lost,
                         SortedMap<String, Integer> duplicated, SortedSet<String> unexpected,
                         SortedMap<String, String> stampedButMissing, List<String> orderViolations,
                         Map<String, String> notes) {

        /** Extra copies on the topic: records minus distinct ids. */
        public int duplicates() {
            return duplicated.values().stream().mapToInt(c -> c - 1).sum();
        }

        public boolean clean() {
            return lost.isEmpty() && unexpected.isEmpty() && stampedButMissing.isEmpty();
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder().append(topic).append(": ").append(committed).append(" committed, ")
                .append(records).append(" records; lost ").append(lost.size()).append(", duplicated ")
                .append(duplicates()).append(" (").append(duplicated.size()).append(" ids), unexpected ")
                .append(unexpected.size()).append(", stamped-but-missing ").append(stampedButMissing.size())
                .append(", order violations ").append(orderViolations.size());
            appendSome(sb, "lost", lost.stream().map(id -> notes.containsKey(id) ? id + " (" + notes.get(id) + ")" : id)
                .collect(Collectors.toList()));
            appendSome(sb, "unexpected", unexpected);
            appendSome(sb, "stamped but missing", stampedButMissing.entrySet().stream()
                .map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.toList()));
            appendSome(sb, "order violations", orderViolations);
            return sb.toString();
        }

        private static void appendSome(StringBuilder sb, String label, Collection<String> items) {
            if (!items.isEmpty()) {
                sb.append("\n  ").append(label).append(": ")
                    .append(items.stream().limit(SHOWN).collect(Collectors.joining(", ")))
                    .append(items.size() > SHOWN ? ", ... (" + items.size() + " in all)" : "");
            }
        }
    }

    /** The reports of every topic of one scenario, with the assertions the scenarios share. */
    public record Reports(List<Report> reports) {
        public int duplicates() {
            return reports.stream().mapToInt(Report::duplicates).sum();
        }

        public int lost() {
            return reports.stream().mapToInt(r -> r.lost().size()).sum();
        }

        public int stampedButMissing() {
            return reports.stream().mapToInt(r -> r.stampedButMissing().size()).sum();
        }

        /** Lost 0, unexpected 0, stamped-but-missing 0 on every topic. */
        public Reports assertNothingLost() {
            if (!reports.stream().allMatch(Report::clean)) {
                throw new AssertionError("delivery check failed:\n" + this);
            }
            return this;
        }

        /**
         * For a check while faults are still in progress (records may be pending): every stamp is backed
         * by a record on the topic, and nothing unexpected is there. Lost is not asserted.
         */
        public Reports assertStampsBacked() {
            if (reports.stream().anyMatch(r -> !r.stampedButMissing().isEmpty() || !r.unexpected().isEmpty())) {
                throw new AssertionError("a row is stamped that its topic does not hold:\n" + this);
            }
            return this;
        }

        public Reports assertNoDuplicates() {
            if (duplicates() > 0) {
                throw new AssertionError("duplicates in a run where none are allowed:\n" + this);
            }
            return this;
        }

        /** Duplicates after faults must stay within what was in flight when they hit. */
        public Reports assertDuplicatesAtMost(long bound, String why) {
            if (duplicates() > bound) {
                throw new AssertionError(duplicates() + " duplicates exceed the in-flight bound " + bound + " ("
                    + why + "):\n" + this);
            }
            return this;
        }

        public Reports assertPerSubjectOrder() {
            if (reports.stream().anyMatch(r -> !r.orderViolations().isEmpty())) {
                throw new AssertionError("per-subject order broken:\n" + this);
            }
            return this;
        }

        @Override
        public String toString() {
            return reports.stream().map(Report::toString).collect(Collectors.joining("\n"));
        }
    }

    public static Report check(String topic, Collection<String> committed, Collection<Stamp> stamped,
                               List<Delivered> received) {
        return check(topic, committed, stamped, received, Map.of());
    }

    /**
     * @param committed ids the source committed for this topic
     * @param stamped rows the source marks as delivered to this topic
     * @param received everything the topic holds, in any order
     * @param notes optional words about a source row (its state), shown next to lost ids
     */
    public static Report check(String topic, Collection<String> committed, Collection<Stamp> stamped,
                               List<Delivered> received, Map<String, String> notes) {
        Set<String> committedSet = new HashSet<>(committed);
        Map<String, Integer> counts = new HashMap<>();
        Map<Long, String> idAt = new HashMap<>();
        for (Delivered d : received) {
            counts.merge(d.id(), 1, Integer::sum);
            idAt.put(position(d.partition(), d.offset()), d.id());
        }
        SortedSet<String> lost = new TreeSet<>();
        for (String id : committedSet) {
            if (!counts.containsKey(id)) {
                lost.add(id);
            }
        }
        SortedMap<String, Integer> duplicated = new TreeMap<>();
        SortedSet<String> unexpected = new TreeSet<>();
        counts.forEach((id, n) -> {
            if (n > 1) {
                duplicated.put(id, n);
            }
            if (!committedSet.contains(id)) {
                unexpected.add(id);
            }
        });
        SortedMap<String, String> stampedButMissing = new TreeMap<>();
        for (Stamp s : stamped) {
            if (!counts.containsKey(s.id())) {
                stampedButMissing.put(s.id(), "stamped, but not on the topic");
            } else if (s.partition() >= 0) {
                String there = idAt.get(position(s.partition(), s.offset()));
                if (!s.id().equals(there)) {
                    stampedButMissing.put(s.id(), "stamp names " + s.partition() + "/" + s.offset() + ", which holds "
                        + (there == null ? "nothing" : there));
                }
            }
        }
        return new Report(topic, committedSet.size(), received.size(), lost, duplicated, unexpected,
            stampedButMissing, orderViolations(received), Map.copyOf(notes));
    }

    /**
     * Per key, the first delivery of each id in (partition, offset) order must come in increasing seq,
     * which is what a consumer that dedupes on the id sees. Records without a seq are ignored.
     */
    static List<String> orderViolations(List<Delivered> received) {
        List<Delivered> sorted = new ArrayList<>(received);
        sorted.sort(Comparator.comparingInt(Delivered::partition).thenComparingLong(Delivered::offset));
        Set<String> seen = new HashSet<>();
        Map<String, Delivered> lastByKey = new LinkedHashMap<>();
        List<String> out = new ArrayList<>();
        for (Delivered d : sorted) {
            if (d.seq() < 0 || !seen.add(d.id())) {
                continue;
            }
            Delivered previous = lastByKey.put(d.key() + "@" + d.partition(), d);
            if (previous != null && d.seq() < previous.seq()) {
                out.add("key " + d.key() + ": seq " + d.seq() + " at " + d.partition() + "/" + d.offset()
                    + " after seq " + previous.seq() + " at " + previous.partition() + "/" + previous.offset());
            }
        }
        return out;
    }

    private static long position(int partition, long offset) {
        return ((long) partition << 48) | offset;
    }
}
