package io.outboxrelay.connector;

/** Wakes the task thread early from a bounded wait: a NOTIFY arrived or a row was acknowledged. */
final class WakeSignal {
    private boolean signalled;

    synchronized void signal() {
        signalled = true;
        notifyAll();
    }

    /** Waits at most {@code maxMs} for a signal and consumes it. */
    synchronized void await(long maxMs) throws InterruptedException {
        long deadline = System.nanoTime() + maxMs * 1_000_000L;
        while (!signalled) {
            long leftNs = deadline - System.nanoTime();
            if (leftNs <= 0) {
                break;
            }
            // rounded up: a wait of 1 ms must not return at once and spin through Connect's poll loop
            wait((leftNs + 999_999) / 1_000_000L);
        }
        signalled = false;
    }
}
