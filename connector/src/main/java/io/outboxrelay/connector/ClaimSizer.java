package io.outboxrelay.connector;

/**
 * How many rows a task's next claim asks for. A claim that comes back full says more rows wait: the next
 * one is twice as big, up to {@code outbox.batch.max.size}; a short claim halves it, down to
 * {@code outbox.batch.size}, the floor that keeps a quiet relay's claims and records small. Bigger claims
 * cost the database less per row (one statement, one stamp for many rows), which is what lets a busy
 * relay keep up; the floor keeps latency low while it is not busy. A claim that retried a row attempted
 * before (claimed alone) makes the next one ask for a single row: such rows come in runs (the rows of a
 * task that restarted), and a claim locks every row it looks at.
 */
final class ClaimSizer {
    private final int floor;
    private final int max;
    private int next;

    ClaimSizer(int floor, int max) {
        this.floor = floor;
        this.max = Math.max(floor, max);
        this.next = floor;
    }

    /** The size of the next claim. */
    int next() {
        return next;
    }

    /** The size rows in flight are bounded by (with the in-flight batches): a retry does not shrink it. */
    int batch() {
        return Math.max(floor, next);
    }

    /** The largest claim this task makes: with the in-flight batches, what bounds the rows it holds. */
    int max() {
        return max;
    }

    /**
     * Records the outcome of the last claim of {@link #next()} rows: whether it found as many as it asked for,
     * whether it retried a row attempted before, and whether rows were left in line.
     */
    void claimed(boolean full, boolean retry, boolean more) {
        if (retry && more) {
            next = 1;
        } else if (full) {
            next = Math.min(max, Math.max(floor, next * 2));
        } else {
            next = Math.max(floor, next / 2);
        }
    }
}
