package io.outboxrelay.mentions;

/**
 * Exponential backoff for failed passes and listener reconnects: 2 s, doubling, capped at 1 min by
 * default (the relay's policy), reset after a success. Not thread-safe: one owner thread each.
 */
final class Backoff {
    static final long DEFAULT_INITIAL_MS = 2_000;
    static final long DEFAULT_MAX_MS = 60_000;

    private final long initialMs;
    private final long maxMs;
    private long nextMs;

    Backoff() {
        this(DEFAULT_INITIAL_MS, DEFAULT_MAX_MS);
    }

    Backoff(long initialMs, long maxMs) {
        if (initialMs <= 0 || maxMs < initialMs) {
            throw new IllegalArgumentException("need 0 < initial <= max, got " + initialMs + " and " + maxMs);
        }
        this.initialMs = initialMs;
        this.maxMs = maxMs;
        this.nextMs = initialMs;
    }

    /** The delay before the next attempt; each call doubles the following one, up to the cap. */
    long nextDelayMs() {
        long delay = nextMs;
        nextMs = Math.min(maxMs, nextMs * 2);
        return delay;
    }

    void reset() {
        nextMs = initialMs;
    }
}
