package io.outboxrelay.mentions;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Decides when the next recovery pass is due: at start, on NOTIFY (the listener thread calls
 * {@link #request}), every scan interval, and again after a failed pass once its backoff has passed.
 * Also the one place the task thread waits, woken early by a request or a settled message.
 * Requests that arrive during a pass are kept and start another pass after it.
 */
final class ScanTrigger {

    /** Why a pass runs; only a periodic pass is limited to messages older than the minimum age. */
    enum Kind {
        START, NOTIFY, PERIODIC;

        boolean periodic() {
            return this == PERIODIC;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Clock clock;
    private final long intervalMs;
    private boolean startPending;
    private boolean notifyPending;
    private boolean periodicPending;
    private boolean signalled;
    private long nextPeriodicAtMs;
    private long notBeforeMs;

    ScanTrigger(Clock clock, Duration scanInterval) {
        this.clock = clock;
        this.intervalMs = scanInterval.toMillis();
        this.nextPeriodicAtMs = clock.millis() + intervalMs;
    }

    /** Asks for a pass of this kind; safe from any thread. */
    void request(Kind kind) {
        lock.lock();
        try {
            switch (kind) {
                case START -> startPending = true;
                case NOTIFY -> notifyPending = true;
                case PERIODIC -> periodicPending = true;
            }
            signalLocked();
        } finally {
            lock.unlock();
        }
    }

    /** Ends a current or the next {@link #await} early, e.g. because a message settled. */
    void wake() {
        lock.lock();
        try {
            signalLocked();
        } finally {
            lock.unlock();
        }
    }

    /** After a failed pass: ask for the same kind again, but not before {@code delayMs} from now. */
    void retryAfter(Kind kind, long delayMs) {
        lock.lock();
        try {
            notBeforeMs = clock.millis() + delayMs;
        } finally {
            lock.unlock();
        }
        request(kind);
    }

    /**
     * The pass due now, consuming its request, or null. A full pass (start, notify) also covers a
     * pending periodic one.
     */
    Kind takeDue() {
        lock.lock();
        try {
            long now = clock.millis();
            if (now >= nextPeriodicAtMs) {
                periodicPending = true;
                nextPeriodicAtMs = now + intervalMs;
            }
            if (now < notBeforeMs) {
                return null;
            }
            Kind kind = startPending ? Kind.START : notifyPending ? Kind.NOTIFY : periodicPending ? Kind.PERIODIC : null;
            if (kind != null) {
                startPending = false;
                notifyPending = false;
                periodicPending = false;
            }
            return kind;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Idle wait: at most {@code maxWait}, less when a pass falls due sooner; returns at once when
     * signalled since the last wait.
     */
    void awaitDue(Duration maxWait) throws InterruptedException {
        await(maxWait, true);
    }

    /** In-pass wait (for settling records): at most {@code maxWait}, or until signalled. */
    void awaitSignal(Duration maxWait) throws InterruptedException {
        await(maxWait, false);
    }

    private void await(Duration maxWait, boolean untilDue) throws InterruptedException {
        lock.lock();
        try {
            if (!signalled) {
                long waitMs = maxWait.toMillis();
                if (untilDue) {
                    long dueAt = startPending || notifyPending || periodicPending ? notBeforeMs : nextPeriodicAtMs;
                    waitMs = Math.max(0, Math.min(waitMs, dueAt - clock.millis()));
                }
                if (waitMs > 0) {
                    changed.await(waitMs, TimeUnit.MILLISECONDS);
                }
            }
            signalled = false;
        } finally {
            lock.unlock();
        }
    }

    private void signalLocked() {
        signalled = true;
        changed.signalAll();
    }
}
