package io.outboxrelay.connector;

import java.sql.SQLException;

/**
 * When a relay task arms the table's wake-up flag and when it claims because of it, as plain bookkeeping
 * on the task thread (the flag itself is {@link Flag}, in PostgreSQL {@link WakeupArming}).
 *
 * <p>BUSY claims whatever it finds; a claim that comes back short arms the flag (SETTLING) and asks for a
 * claim, and while writers that were in progress at the arming remain, the task claims again each time
 * some of them end (looking after 2 ms, doubling up to {@link ClaimSchedule#MAX_IDLE_WAIT_MS} while none
 * ends). When none is left, one more claim (FINAL); if it finds nothing, the task is QUIET: armed and
 * idle until a NOTIFY. A NOTIFY means a writer cleared the flag, and with it maybe the wake-up of writers
 * that came after it: every task that receives one arms again and settles on the writers then in progress,
 * whatever it finds to claim (the rows of those writers may be in its share of subjects, not in the
 * share of the task that claimed the notifying row). Unless busy, a task also looks every
 * {@link ClaimSchedule#MAX_IDLE_WAIT_MS} whether the flag was cleared without a NOTIFY reaching it (the
 * clearing writer rolled back, or LISTEN was reconnecting), and then arms it again and sends the NOTIFY
 * the writer did not: writers after the clearing one skipped theirs, their rows may be in another task's
 * share, and the other tasks, seeing the flag armed again at their own look, would not claim.
 *
 * <p>With a linger ({@code outbox.linger.ms}), a claim that finds rows but fewer than it asked for does
 * not arm: the task claims again when the linger has passed, and only a claim that finds nothing arms the
 * flag. A NOTIFY that reaches a lingering task does not arm it either (its next claim is due anyway, and
 * arming would cost the next writer a NOTIFY): while rows keep arriving, writers send none.
 */
final class WakeupCycle {
    /** The flag as the cycle uses it. */
    interface Flag {
        /**
         * Sets the flag and notes the writers in progress; with {@code wakeEveryTask} also sends a NOTIFY, so
         * that every task of the table arms again and claims as if a writer had sent one. While the server's
         * NOTIFY queue is full the flag stays down instead, and {@link #armed} reads false, so that each look
         * claims.
         *
         * @return false when the NOTIFY asked for could not be sent (the server's queue is full)
         */
        boolean arm(boolean wakeEveryTask) throws SQLException;

        boolean someEnded() throws SQLException;

        boolean waiting();

        boolean armed() throws SQLException;
    }

    enum State { BUSY, SETTLING, FINAL, QUIET }

    static final long RECHECK_MIN_MS = 2;

    private final Flag flag;
    private final Runnable requestClaim;
    private final long lingerMs;
    /** While rows keep arriving: when the next claim is due (Long.MIN_VALUE: not lingering). */
    private long lingerUntil = Long.MIN_VALUE;
    private State state = State.BUSY;
    private long nextArmCheckAt;
    private long nextSettleCheckAt;
    private long recheckMs = RECHECK_MIN_MS;
    private volatile boolean notified;
    /**
     * Passes so far ({@link #beforeClaim} starts one), and the one that last armed the flag: a claim in the
     * same pass already follows that arming. Counted, not timed: two passes can fall in one millisecond.
     */
    private long passes;
    private long armedInPass = -1;
    /**
     * A look found the flag cleared without a NOTIFY: the next arming that succeeds sends one (and, while
     * the server's NOTIFY queue has no room for it, every arming after that until one is sent).
     */
    private boolean wakeEveryTask;

    /** @param lingerMs how long a busy task waits before its next claim instead of arming (0: it arms) */
    WakeupCycle(Flag flag, Runnable requestClaim, long lingerMs) {
        this.flag = flag;
        this.requestClaim = requestClaim;
        this.lingerMs = lingerMs;
    }

    State state() {
        return state;
    }

    /** LISTEN thread: a NOTIFY arrived, so a writer cleared the flag. */
    void notified() {
        notified = true;
    }

    /** Before a pass's claim: looks at the writers in progress or at the flag when it is time to. */
    void beforeClaim(long now) throws SQLException {
        passes++;
        if (lingerUntil != Long.MIN_VALUE && now >= lingerUntil) {
            lingerUntil = Long.MIN_VALUE;
            requestClaim.run();
        }
        if (notified) {
            notified = false;
            if (lingerUntil == Long.MIN_VALUE) {
                arm(now);
                return;
            }
        }
        if (state != State.BUSY && now >= nextArmCheckAt) {
            nextArmCheckAt = now + ClaimSchedule.MAX_IDLE_WAIT_MS;
            if (!flag.armed()) {
                wakeEveryTask = true;
                arm(now);
                return;
            }
        }
        if (state == State.SETTLING && now >= nextSettleCheckAt) {
            if (flag.someEnded()) {
                requestClaim.run(); // a writer that may have read the flag unarmed has committed
                recheckMs = RECHECK_MIN_MS;
            } else {
                recheckMs = Math.min(recheckMs * 2, ClaimSchedule.MAX_IDLE_WAIT_MS);
            }
            nextSettleCheckAt = now + recheckMs;
            if (!flag.waiting()) {
                state = State.FINAL;
                requestClaim.run();
            }
        }
    }

    /**
     * After a claim: one that left rows in line ({@code more}) means more rows wait (no NOTIFY needed); one
     * that found fewer rows than it asked for, or none after a busy spell, arms the flag; an empty claim
     * once the writers in progress at the arming have ended leaves the task quiet until a NOTIFY.
     */
    void afterClaim(int rows, boolean more, long now) throws SQLException {
        if (more) {
            state = State.BUSY;
        } else if (rows > 0 && lingerMs > 0) {
            state = State.BUSY; // rows keep arriving: claim again in a moment, the flag stays unarmed
            lingerUntil = now + lingerMs;
        } else if ((rows > 0 || state == State.BUSY) && armedInPass != passes) {
            arm(now);
        } else if (state == State.FINAL) {
            state = State.QUIET;
        }
    }

    /**
     * How long an idle poll may wait: no longer than the next look at the flag (a wait cut short, by an
     * acknowledgement for instance, must not put it off), and while settling than the next look at the writers.
     */
    long idleWaitMs(long now, long idleWaitMs) {
        if (lingerUntil != Long.MIN_VALUE) {
            return Math.max(1, Math.min(idleWaitMs, lingerUntil - now));
        }
        if (state == State.BUSY) {
            return idleWaitMs;
        }
        long wait = Math.min(idleWaitMs, nextArmCheckAt - now);
        if (state == State.SETTLING) {
            wait = Math.min(wait, nextSettleCheckAt - now);
        }
        return Math.max(1, wait);
    }

    private void arm(long now) throws SQLException {
        lingerUntil = Long.MIN_VALUE;
        state = State.BUSY; // until the arming and its snapshot both succeed: a failure arms again next time
        boolean sent = flag.arm(wakeEveryTask);
        wakeEveryTask = wakeEveryTask && !sent;
        armedInPass = passes;
        state = State.SETTLING;
        recheckMs = RECHECK_MIN_MS;
        nextSettleCheckAt = now; // the claim after arming is the next pass's
        requestClaim.run();
    }
}
