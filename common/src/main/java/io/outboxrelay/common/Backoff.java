package io.outboxrelay.common;

/**
 * Doubling backoff: initial, 2x, 4x, ... capped at max (2 s to 1 min by default, the relay's policy).
 * Shared by the relay's failing passes and failed rows and the mention task's passes and LISTEN
 * reconnects. Not thread-safe: one owner thread each.
 */
public final class Backoff {
    public static final long DEFAULT_INITIAL_MS = 2_000;
    public static final long DEFAULT_MAX_MS = 60_000;

    private final long initialMs;
    private final long maxMs;
    private int failures;

    public Backoff() {
        this(DEFAULT_INITIAL_MS, DEFAULT_MAX_MS);
    }

    public Backoff(long initialMs, long maxMs) {
        this.initialMs = initialMs;
        this.maxMs = maxMs;
    }

    /** Delay before the n-th retry (n >= 1). */
    public static long delayMs(long initialMs, long maxMs, int n) {
        if (n <= 1) {
            return Math.min(initialMs, maxMs);
        }
        int shift = Math.min(n - 1, 30);
        long d = initialMs << shift;
        return d < 0 || d > maxMs ? maxMs : d;
    }

    public long nextDelayMs() {
        failures++;
        return delayMs(initialMs, maxMs, failures);
    }

    public long delayForAttempt(int attempt) {
        return delayMs(initialMs, maxMs, attempt);
    }

    public void reset() {
        failures = 0;
    }

    public int failures() {
        return failures;
    }
}
