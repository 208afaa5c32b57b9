package io.outboxrelay.connector;

import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * When a relay task claims: on a request (a NOTIFY, the listener's reconnect, a failed pass, rows given
 * back), right after a full claim, when rows released after a failure fall due again, on the periodic
 * sweep, and with LISTEN off every poll interval. Plain bookkeeping on a millisecond clock, owned by the
 * task thread except {@link #request()}, which the LISTEN thread calls.
 *
 * <p>A reason to claim is only used up by a claim that runs. While the task has no room for more rows
 * in flight, every reason stays pending, so a NOTIFY or a sweep that lands on a full task is acted on
 * as soon as acknowledgements make room, not at the next NOTIFY or sweep.
 */
final class ClaimSchedule {
    /** The longest an idle poll() waits before it looks at the clock again. */
    static final long MAX_IDLE_WAIT_MS = 250;

    /** A claim is due; {@code sweep} when the periodic sweep is among its reasons. */
    record Due(boolean sweep) {
    }

    private final AtomicBoolean requested = new AtomicBoolean(true);
    private final long sweepIntervalMs;
    private final long pollIntervalMs;
    private final boolean listening;
    private long nextSweepAt;
    private long nextPollAt;
    private boolean lastClaimFull;
    /** When rows released after a failure become claimable again, earliest first. */
    private final PriorityQueue<Long> retryTimes = new PriorityQueue<>();

    ClaimSchedule(long now, long sweepIntervalMs, long pollIntervalMs, boolean listening) {
        this.sweepIntervalMs = sweepIntervalMs;
        this.pollIntervalMs = pollIntervalMs;
        this.listening = listening;
        this.nextSweepAt = now + sweepIntervalMs;
        this.nextPollAt = now;
    }

    /** Asks for a claim at the next chance; safe from any thread. */
    void request() {
        requested.set(true);
    }

    /** A failed row was released with a backoff: it is claimable again from {@code at} on. */
    void retryAt(long at) {
        retryTimes.add(at);
    }

    /** Whether to claim now, and why; {@code null} when not. With {@code room} false nothing is used up. */
    Due due(long now, boolean room) {
        if (!room) {
            return null;
        }
        boolean due = requested.getAndSet(false) | lastClaimFull;
        boolean sweep = now >= nextSweepAt;
        if (sweep) {
            nextSweepAt = now + sweepIntervalMs;
        }
        if (!listening && now >= nextPollAt) {
            nextPollAt = now + pollIntervalMs;
            due = true;
        }
        while (!retryTimes.isEmpty() && retryTimes.peek() <= now) {
            retryTimes.poll();
            due = true;
        }
        return due || sweep ? new Due(sweep) : null;
    }

    /** Records whether the claim found as many rows as it asked for: then claim again at once. */
    void claimed(boolean full) {
        lastClaimFull = full;
    }

    /**
     * How long an idle poll() may wait for a wake-up before a claim falls due on its own: the sweep, the
     * next released row, and with LISTEN off the poll interval; after a claim that left rows in line, none.
     * Without room the wait is for an acknowledgement, which wakes the task itself.
     */
    long idleWaitMs(long now, boolean room) {
        if (!room) {
            return MAX_IDLE_WAIT_MS;
        }
        if (lastClaimFull) {
            return 1; // rows wait in line although this pass returned no record (it poisoned them, say)
        }
        long until = listening ? nextSweepAt : Math.min(nextSweepAt, nextPollAt);
        if (!retryTimes.isEmpty()) {
            until = Math.min(until, retryTimes.peek());
        }
        return Math.min(MAX_IDLE_WAIT_MS, Math.max(1, until - now));
    }
}
