package io.outboxrelay.connector;

import java.util.concurrent.atomic.AtomicLong;

/** Counters of one relay task; read by its JMX bean and its stop summary. */
final class RelayMetrics {
    final AtomicLong claimed = new AtomicLong();
    final AtomicLong stamped = new AtomicLong();
    final AtomicLong poisoned = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong notifyWakeups = new AtomicLong();
    final AtomicLong sweeps = new AtomicLong();
    final AtomicLong lastClaimMs = new AtomicLong();
    final AtomicLong lastStampMs = new AtomicLong();

    void claimed(int rows, long ms) {
        claimed.addAndGet(rows);
        lastClaimMs.set(ms);
    }

    void stamped(int rows, long ms) {
        stamped.addAndGet(rows);
        lastStampMs.set(ms);
    }

    void poisoned(int rows) {
        poisoned.addAndGet(rows);
    }

    void failed(int rows) {
        failed.addAndGet(rows);
    }

    void notifyWakeup() {
        notifyWakeups.incrementAndGet();
    }

    void sweep() {
        sweeps.incrementAndGet();
    }

    String summary() {
        return "claimed " + claimed + ", stamped " + stamped + ", failed " + failed + ", poisoned " + poisoned
            + ", NOTIFY wake-ups " + notifyWakeups + ", sweeps " + sweeps;
    }
}
