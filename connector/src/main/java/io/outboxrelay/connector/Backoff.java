package io.outboxrelay.connector;

/** Doubling backoff: initial, 2x, 4x, ... capped at max. */
final class Backoff {
    private final long initialMs;
    private final long maxMs;
    private int failures;

    Backoff(long initialMs, long maxMs) {
        this.initialMs = initialMs;
        this.maxMs = maxMs;
    }

    /** Delay before the n-th retry (n >= 1). */
    static long delayMs(long initialMs, long maxMs, int n) {
        if (n <= 1) {
            return Math.min(initialMs, maxMs);
        }
        int shift = Math.min(n - 1, 30);
        long d = initialMs << shift;
        return d < 0 || d > maxMs ? maxMs : d;
    }

    long nextDelayMs() {
        failures++;
        return delayMs(initialMs, maxMs, failures);
    }

    long delayForAttempt(int attempt) {
        return delayMs(initialMs, maxMs, attempt);
    }

    void reset() {
        failures = 0;
    }

    int failures() {
        return failures;
    }
}
