package io.outboxrelay.connector;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The records of one replay request's chunk that Connect holds: how many are still unacknowledged, and the first
 * failure. The request's progress moves to {@link #walkedTo} only once every record is acknowledged, so a chunk
 * is sent whole again after a failure or a crash (at least once), never skipped. Settled on the producer's I/O
 * thread: lock-free and O(1).
 */
final class ReplayChunk {
    final ReplayStore.Request request;
    /** The request's progress once this chunk is delivered: its last row, or the walk's end. */
    final long walkedTo;
    /** Whether the walk ends with this chunk. */
    final boolean last;
    /** Records in the chunk. */
    final int records;
    private final AtomicInteger open;
    private final Runnable onSettled;
    private volatile String failure;

    ReplayChunk(ReplayStore.Request request, long walkedTo, boolean last, int records, Runnable onSettled) {
        this.request = request;
        this.walkedTo = walkedTo;
        this.last = last;
        this.records = records;
        this.open = new AtomicInteger(records);
        this.onSettled = onSettled;
    }

    /** One record was acknowledged: delivered, or (under errors.tolerance=all, a null acknowledgement) not. */
    void acknowledged(boolean delivered) {
        if (!delivered && failure == null) {
            failure = "a record of the chunk after seq " + request.progressSeq() + " was not delivered (a tolerated"
                + " failure under errors.tolerance=all); the chunk is sent again";
        }
        int before = open.getAndUpdate(n -> Math.max(0, n - 1));
        if (before == 1) {
            onSettled.run();
        }
    }

    /**
     * With connector-defined transaction boundaries, records still open when Connect polls again were filtered
     * (docs/exactly-once.md, 3.8): they count as delivered. Returns how many were open.
     */
    int settleOpenAsFiltered() {
        int before = open.getAndSet(0);
        if (before > 0) {
            onSettled.run();
        }
        return before;
    }

    boolean settled() {
        return open.get() == 0;
    }

    /** Why the chunk must be sent again, or null. */
    String failure() {
        return failure;
    }
}
