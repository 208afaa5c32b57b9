package io.outboxrelay.connector;

import io.outboxrelay.common.ComputedOffset;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The source offsets of one claim's records (docs/exactly-once.md, 3.3-3.4). A record's offset names every row
 * held from earlier lists and the rows of this claim all of whose records come at or before it (a
 * <em>progressive</em> offset), so that whatever prefix of the list Connect commits, the offset it commits
 * names only rows whose every record is in Kafka. With connector-defined transaction boundaries a list is
 * committed whole, and every record carries the one offset naming every row of it.
 *
 * <p>Per record this costs one small map and a counter per row the record settles; the seqs are encoded only
 * for the offset Connect reads. Task thread only, until {@link #seal()}: the offsets are read after the
 * records were returned from {@code poll()}.
 */
final class BatchOffsets implements RecordOffsets {
    private final Map<String, Object> partition;
    private final String owner;
    private final int tasks;
    private final String subscriptions;
    private final boolean wholeList;
    /** The rows of this claim with records still to come, and how many. */
    private final Map<PendingRow, int[]> recordsToCome = new IdentityHashMap<>();
    private long[] seqs;
    private int size;
    private volatile long[] sealed;
    private ComputedOffset whole;

    /**
     * @param earlier   seqs of the rows held from earlier lists (in flight, or acknowledged and not stamped)
     * @param rows      this claim's rows, as handed out
     * @param wholeList every record names every row of the list (connector-defined boundaries)
     */
    BatchOffsets(Map<String, Object> partition, String owner, int tasks, String subscriptions, long[] earlier,
                 List<PendingRow> rows, boolean wholeList) {
        this.partition = partition;
        this.owner = owner;
        this.tasks = tasks;
        this.subscriptions = subscriptions;
        this.wholeList = wholeList;
        this.seqs = Arrays.copyOf(earlier, earlier.length + rows.size());
        this.size = earlier.length;
        for (PendingRow row : rows) {
            if (wholeList || row.slotCount() == 0) {
                seqs[size++] = row.seq(); // complete from the list's first record on
            } else {
                recordsToCome.put(row, new int[] {row.slotCount()});
            }
        }
    }

    /** For tests: the slot partition of relay task 0 of {@code events}. */
    BatchOffsets(String owner, int tasks, long[] earlier, List<PendingRow> rows, boolean wholeList) {
        this(PendingOffset.slot("events", 0, tasks), owner, tasks, null, earlier, rows, wholeList);
    }

    @Override
    public Map<String, ?> partition() {
        return partition;
    }

    /** The next record's offset; {@code rows} are the rows whose slots it settles, one slot each. */
    @Override
    public Map<String, ?> next(PendingRow[] rows) {
        if (wholeList) {
            if (whole == null) {
                whole = offsetAt(size);
            }
            return whole;
        }
        for (PendingRow row : rows) {
            int[] left = recordsToCome.get(row);
            if (left != null && --left[0] == 0) {
                seqs[size++] = row.seq();
            }
        }
        return offsetAt(size);
    }

    private ComputedOffset offsetAt(int count) {
        return new ComputedOffset(() -> value(count));
    }

    @Override
    public void seal() {
        sealed = seqs;
    }

    /** The value naming the first {@code count} seqs; computed once per offset Connect reads. */
    private Map<String, Object> value(int count) {
        long[] all = sealed != null ? sealed : seqs; // not sealed: read on the task thread while building
        return PendingOffset.value(owner, tasks, subscriptions, all, count); // copies what it sorts
    }
}
