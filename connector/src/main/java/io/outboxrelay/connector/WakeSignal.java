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
            long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
            if (leftMs <= 0) {
                break;
            }
            wait(leftMs);
        }
        signalled = false;
    }
}
