package io.outboxrelay.connector;

/**
 * How many fresh rows a task's next claim asks for. A claim that comes back full says more rows wait:
 * the next one is twice as big, up to {@code outbox.batch.max.size}; a short claim halves it, down to
 * {@code outbox.batch.size}, the floor that keeps a quiet relay's claims and records small. Bigger claims
 * cost the database less per row (one statement, one stamp for many rows), which is what lets a busy
 * relay keep up; the floor keeps latency low while it is not busy.
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

    /** The size of the next fresh claim. */
    int next() {
        return next;
    }

    /** The largest claim this task makes: with the in-flight batches, what bounds the rows it holds. */
    int max() {
        return max;
    }

    /** Records how many rows the last fresh claim of {@link #next()} rows returned. */
    void claimed(int rows) {
        next = rows >= next ? Math.min(max, next * 2) : Math.max(floor, next / 2);
    }
}
