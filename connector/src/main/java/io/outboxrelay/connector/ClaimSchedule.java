package io.outboxrelay.connector;

import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * When a relay task claims: on a request (a NOTIFY, the listener's reconnect, a failed pass), right
 * after a full claim, when rows attempted before fall due again, on the periodic sweep, and with LISTEN
 * off every poll interval. Plain bookkeeping on a millisecond clock, owned by the task thread except
 * {@link #request()}, which the LISTEN thread calls.
 *
 * <p>A reason to claim is only used up by a claim that runs. While the task has no room for more rows
 * in flight, every reason stays pending, so a NOTIFY or a sweep that lands on a full task is acted on
 * as soon as acknowledgements make room, not at the next NOTIFY or sweep.
 */
final class ClaimSchedule {
    /** The longest an idle poll() waits before it looks at the clock again. */
    static final long MAX_IDLE_WAIT_MS = 250;

    /** What a due claim should include. */
    record Due(boolean sweep, boolean suspects) {
    }

    private final AtomicBoolean requested = new AtomicBoolean(true);
    private final long sweepIntervalMs;
    private final long pollIntervalMs;
    private final boolean listening;
    private long nextSweepAt;
    private long nextPollAt;
    private long suspectCheckAt;
    private boolean lastClaimFull;
    /** When rows released after a failure become claimable again, earliest first. */
    private final PriorityQueue<Long> retryTimes = new PriorityQueue<>();

    ClaimSchedule(long now, long sweepIntervalMs, long pollIntervalMs, boolean listening) {
        this.sweepIntervalMs = sweepIntervalMs;
        this.pollIntervalMs = pollIntervalMs;
        this.listening = listening;
        this.nextSweepAt = now + sweepIntervalMs;
        this.nextPollAt = now;
        this.suspectCheckAt = now;
    }

    /** Asks for a claim at the next chance; safe from any thread. */
    void request() {
        requested.set(true);
    }

    /** Rows attempted before may be claimable from {@code at} on (lost leases given back). */
    void checkSuspectsBy(long at) {
        suspectCheckAt = Math.min(suspectCheckAt, at);
    }

    /** A failed row was released with a backoff: it is claimable again from {@code at} on. */
    void retryAt(long at) {
        retryTimes.add(at);
        checkSuspectsBy(at);
    }

    /**
     * Whether to claim now, and what; {@code null} when not. With {@code room} false nothing is used up.
     */
    Due due(long now, boolean room) {
        if (!room) {
            return null;
        }
        boolean due = requested.getAndSet(false) | lastClaimFull;
        boolean sweep = now >= nextSweepAt;
        if (sweep) {
            nextSweepAt = now + sweepIntervalMs;
            suspectCheckAt = Math.min(suspectCheckAt, now);
        }
        if (!listening && now >= nextPollAt) {
            nextPollAt = now + pollIntervalMs;
            due = true;
        }
        boolean suspects = now >= suspectCheckAt;
        return due || sweep || suspects ? new Due(sweep, suspects) : null;
    }

    /**
     * Records a claim's outcome: whether the fresh claim came back full (claim again at once), and,
     * when suspects were looked for, whether any came back (look again at once) or else when the next
     * released row falls due.
     */
    void claimed(long now, Due due, boolean freshFull, boolean suspectFound) {
        lastClaimFull = freshFull;
        if (due.suspects()) {
            while (!retryTimes.isEmpty() && retryTimes.peek() <= now) {
                retryTimes.poll();
            }
            Long next = retryTimes.peek();
            suspectCheckAt = suspectFound ? now : Math.max(next == null ? Long.MAX_VALUE : next, now + 1);
        }
    }

    /**
     * How long an idle poll() may wait for a wake-up before a claim falls due on its own: the sweep,
     * and with LISTEN off the poll interval. Without room the wait is for an acknowledgement, which
     * wakes the task itself.
     */
    long idleWaitMs(long now, boolean room) {
        if (!room) {
            return MAX_IDLE_WAIT_MS;
        }
        long until = listening ? nextSweepAt : Math.min(nextSweepAt, nextPollAt);
        return Math.min(MAX_IDLE_WAIT_MS, Math.max(1, until - now));
    }
}
