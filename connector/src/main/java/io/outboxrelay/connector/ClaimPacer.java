package io.outboxrelay.connector;

import io.outboxrelay.common.SqlStates;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a relay task claims, and when it arms the table's wake-up flag: the one owner of the task's claim timing.
 * Two states (docs/wakeup.md has the diagram, every edge and the test of each):
 * <ul>
 *   <li>ACTIVE: rows keep arriving. The task claims a pace apart (at once after a claim that left rows in line),
 *       the pace and the idle time below coming from {@link ClaimCadence}; the flag stays down, writers send no
 *       NOTIFY, a NOTIFY that reaches the task changes nothing (but see below), and after
 *       {@link #DEAF_AFTER_MS} active the task turns LISTEN off. Once its claims have found nothing for the idle
 *       time (two claims at least) it turns LISTEN on again and goes QUIET; a spell that has found no rows (woken
 *       for another share's, LISTEN back in place, the start) goes QUIET at its second empty claim, a pace but at
 *       most {@link #LOOK_INTERVAL_MS} (while polling, {@code outbox.poll.interval.ms} when shorter) after the
 *       first. A NOTIFY that came during the claim that would end a spell brings one more claim.
 *   <li>QUIET: the task <em>looks</em>: it arms the flag (once LISTEN is in place) and claims. After a spell that
 *       found rows, first at once (a pace later when LISTEN was off), then a pace later, the gap doubling up to
 *       {@link #LOOK_INTERVAL_MS}; after one that found nothing (woken for another share's rows, at start), every
 *       {@link #LOOK_INTERVAL_MS} from the first; while it polls (no flag it may use, or LISTEN off) every
 *       {@code outbox.poll.interval.ms}. A NOTIFY makes it claim at once. Whatever a NOTIFY failed to tell (a writer
 *       that read the flag down before the arming, a clear rolled back or never sent, a dead LISTEN session, a row
 *       whose backoff ended) is claimed by the next look.
 * </ul>
 * A claim that finds rows makes the task ACTIVE. Task thread only, except {@link #wake()}.
 */
final class ClaimPacer {
    private static final Logger log = LoggerFactory.getLogger(ClaimPacer.class);

    /** The wake-up flag as the pacer uses it ({@link WakeupFlag} in PostgreSQL). */
    interface Flag {
        /** Arms the flag: writers take it down and NOTIFY. */
        void arm() throws SQLException;
    }

    /** The task's LISTEN session as the pacer uses it ({@code PostgresListener}). */
    interface Listener {
        /** No session to control (LISTEN off, or none given yet): its checks do nothing. */
        Listener NONE = new Listener() {
        };

        /** Asks for LISTEN on or off; the session's thread makes the change soon after. */
        default void listen(boolean on) {
        }

        /** Whether a change asked for is not made yet (false while the session is down). */
        default boolean changing() {
            return false;
        }

        /** Asks the session to prove at once that it is alive (a look found rows no NOTIFY told of). */
        default void checkAlive() {
        }
    }

    enum State { ACTIVE, QUIET }

    /** A claim due now, and whether it is the sweep's. */
    record Claim(boolean sweep) {
    }

    /** Empty claims in a row, at least, before an active task goes quiet. */
    static final int EMPTY_CLAIMS_BEFORE_ARMING = 2;
    /** The longest gap between a quiet task's looks (claims) while it waits for a NOTIFY. */
    static final long LOOK_INTERVAL_MS = 250;
    /** The longest a poll() waits without looking at the clock, so that stop() ends it soon. */
    static final long MAX_WAIT_MS = 250;
    /**
     * How long an active task's claims keep finding rows before it turns LISTEN off. PostgreSQL wakes every
     * listening session of the database for each NOTIFY sent there (the write receipts of every stamp, other tasks'
     * wake-ups, the application's own), and an active task needs none of them; turning LISTEN off and on costs two
     * small statements, so a task does it only once it has been busy this long.
     */
    static final long DEAF_AFTER_MS = 1_000;
    /** At most one warning this often about a flag the task cannot arm. */
    private static final long WARN_EVERY_MS = 60_000;

    private Flag flag;
    /** Quiet, claim every {@code pollIntervalMs}: LISTEN is off, or the table's flag is one the role may not use. */
    private boolean polling;
    private final ClaimCadence cadence;
    private final long sweepIntervalMs;
    private final long pollIntervalMs;
    private Listener listener = Listener.NONE;
    private volatile State state = State.ACTIVE;
    private volatile boolean woken;
    private long claimAt;
    private long nextSweepAt;
    /** QUIET: the gap before the next look. */
    private long lookGapMs;
    private int emptyClaims;
    /** Whether a claim of this active spell found rows. */
    private boolean foundRows;
    private long lastWarnAt = Long.MIN_VALUE;
    /** Since when this task is active without having been idle (MIN_VALUE: not active), and LISTEN is off. */
    private long activeSince = Long.MIN_VALUE;
    private boolean deaf;

    /**
     * @param listening     whether LISTEN is on; off, the task claims every {@code pollIntervalMs} while quiet
     * @param paceMs        {@code outbox.linger.ms}: between claims while rows keep arriving
     * @param maxPaceMs     {@code outbox.linger.max.ms}: between claims while each brings few rows (at least
     *                      {@code paceMs})
     */
    ClaimPacer(long now, boolean listening, long paceMs, long maxPaceMs, long sweepIntervalMs, long pollIntervalMs) {
        this.polling = !listening;
        this.cadence = new ClaimCadence(now, paceMs, maxPaceMs);
        this.sweepIntervalMs = sweepIntervalMs;
        this.pollIntervalMs = pollIntervalMs;
        this.claimAt = now;
        this.nextSweepAt = now + sweepIntervalMs;
    }

    State state() {
        return state;
    }

    /**
     * With LISTEN on: the table's flag, once a pass found it (null: none, the trigger NOTIFYs on every insert), and
     * the task's LISTEN session, which the task turns off while busy. A flag found later (a sweep's look, after
     * migration V2 or a grant) is armed at the next look.
     */
    void useFlag(Flag flag, Listener listener) {
        this.flag = flag;
        this.listener = listener;
        polling = false;
        lookGapMs = Math.min(lookGapMs, LOOK_INTERVAL_MS); // quiet and polling: the looks after the next one
    }

    /**
     * The table has a flag, but the role may neither set nor read it ({@link WakeupFlag.NotPermitted}): its writers
     * NOTIFY only while a task is armed, which this one cannot be, so while quiet it claims every
     * {@code pollIntervalMs}, as with LISTEN off. A later {@link #useFlag} (a sweep's look, once the grant is in)
     * ends it.
     */
    void pollWithoutFlag(long now, Listener listener) {
        this.flag = null;
        this.listener = listener;
        polling = true;
        if (state == State.QUIET) {
            lookGapMs = pollIntervalMs;
            claimAt = Math.min(claimAt, now + pollIntervalMs);
        }
    }

    boolean hasFlag() {
        return flag != null;
    }

    /** Whether a quiet task claims every {@code pollIntervalMs}: it has no flag it may use, or does not listen. */
    boolean polling() {
        return polling;
    }

    /**
     * LISTEN thread: a NOTIFY arrived, or LISTEN is (again) in place and one may have been missed.
     *
     * @return whether to wake the task thread: not while ACTIVE, where the next claim is due anyway
     */
    boolean wake() {
        woken = true;
        return state != State.ACTIVE;
    }

    /** Claim at {@code at} or sooner (a failed pass, leases taken back, a subject released, stamps while quiet). */
    void request(long at) {
        claimAt = Math.min(claimAt, at);
    }

    /**
     * Before a pass: whether to claim now; a quiet task's claim is a look, and arms the flag first (a failed arming
     * only delays the wake-up: it never fails the pass or its stamps). Without {@code room} no claim, arming or
     * sweep is used up (a NOTIFY still makes a quiet task ACTIVE, its claim due once there is room).
     */
    Claim next(long now, boolean room) {
        if (woken) {
            woken = false; // a NOTIFY, or LISTEN in place again: an active task's next claim is due anyway
            if (state != State.ACTIVE) {
                activate(now);
            }
        }
        boolean sweep = now >= nextSweepAt;
        if (!room || !(now >= claimAt || sweep)) {
            return null;
        }
        if (sweep) {
            nextSweepAt = now + sweepIntervalMs;
        }
        if (state == State.QUIET && flag != null && !listener.changing()) {
            arm(now); // LISTEN still being turned on: this look claims unarmed, the next one arms
        }
        return new Claim(sweep);
    }

    /** After a claim: {@code rows} it leased, {@code more} when rows may wait in line. */
    void claimed(long now, int rows, boolean more) {
        if (more || rows > 0) {
            if (state == State.QUIET && !polling) {
                listener.checkAlive(); // a look found rows no NOTIFY told of: is the LISTEN session still there?
            }
            activate(now);
            foundRows = true;
            long pace = cadence.rowsFound(now, rows);
            hearLess(now);
            claimAt = more ? now : now + pace;
        } else if (state == State.QUIET) {
            claimAt = now + lookGapMs;
            lookGapMs = Math.min(2 * lookGapMs, quietGapMs());
        } else {
            emptyClaims++;
            long pace = cadence.nothingFound(now);
            // two empty claims at least; a spell that has found rows ends once they span the idle time, one that has
            // found none (woken for another share's, LISTEN back in place, the start) at the second. A NOTIFY that
            // came during this claim keeps the task in this spell for one more claim. The next claim comes a pace
            // later; in a spell without rows at most LOOK_INTERVAL_MS, or the poll interval while polling when that
            // is shorter: no later than a quiet task's next look (the flag is down, no NOTIFY tells of the share's
            // rows meanwhile)
            boolean over = emptyClaims >= EMPTY_CLAIMS_BEFORE_ARMING && (!foundRows || cadence.idle(now));
            if (!woken && over) {
                quiet(now, hearAgain());
            } else {
                claimAt = now + (foundRows ? pace : Math.min(pace, Math.min(LOOK_INTERVAL_MS, quietGapMs())));
            }
        }
    }

    /**
     * How long an idle poll() may wait for a wake-up before something falls due. Without room no claim can be
     * due: an acknowledgement wakes the task when it makes room.
     */
    long waitMs(long now, boolean room) {
        if (woken && state != State.ACTIVE) {
            return 0;
        }
        long until = room ? Math.min(claimAt, nextSweepAt) : Long.MAX_VALUE;
        return Math.max(0, Math.min(MAX_WAIT_MS, until - now));
    }

    /** {@code outbox.linger.ms}: the soonest a task not busy stamps what was acknowledged. */
    long paceMs() {
        return cadence.paceMs();
    }

    /**
     * A claim found rows: once the task has been active for {@link #DEAF_AFTER_MS} since its first claim with rows
     * (claims that find nothing short of the idle time do not break that, only {@link #hearAgain()} does), LISTEN
     * goes off.
     */
    private void hearLess(long now) {
        if (activeSince == Long.MIN_VALUE) {
            activeSince = now;
        } else if (!deaf && now - activeSince >= DEAF_AFTER_MS) {
            deaf = true;
            listener.listen(false);
        }
    }

    /**
     * The task goes quiet: LISTEN on again before it waits for a NOTIFY.
     *
     * @return whether LISTEN was off and is asked for now (the first look waits a pace for it)
     */
    private boolean hearAgain() {
        activeSince = Long.MIN_VALUE;
        if (!deaf) {
            return false;
        }
        deaf = false;
        listener.listen(true);
        return true;
    }

    private void activate(long now) {
        if (state != State.ACTIVE) {
            cadence.newSpell();
            foundRows = false;
        }
        state = State.ACTIVE;
        emptyClaims = 0;
        claimAt = Math.min(claimAt, now);
    }

    /**
     * The spell is over: its claims found nothing for the idle time, or two found nothing in a spell without rows.
     * After a spell that found rows, with a flag to arm, the first look comes at once ({@code listenAsked}: a pace
     * later, for LISTEN to be in place) and the gaps double from a pace up to {@link #LOOK_INTERVAL_MS}: a writer
     * that read the flag down just before the arming sends no NOTIFY, and its row is claimed about as soon as it
     * commits. Otherwise the looks are {@link #quietGapMs()} apart from the first: no flag to arm, or a spell that
     * found nothing (a NOTIFY wakes every task of the table, and a task that armed at once each time would have the
     * busy shares' next writer NOTIFY again and wake it, over and over).
     */
    private void quiet(long now, boolean listenAsked) {
        state = State.QUIET;
        long pace = Math.min(cadence.paceMs(), LOOK_INTERVAL_MS);
        boolean raced = flag != null && foundRows;
        lookGapMs = raced ? pace : quietGapMs();
        claimAt = now + (!raced ? lookGapMs : listenAsked ? pace : 0);
    }

    private long quietGapMs() {
        return polling ? pollIntervalMs : LOOK_INTERVAL_MS;
    }

    private void arm(long now) {
        try {
            flag.arm();
        } catch (SQLException e) {
            if (SqlStates.is(e, SqlStates.INSUFFICIENT_PRIVILEGE)) {
                refused(e, now);
            } else if (lastWarnAt == Long.MIN_VALUE || now - lastWarnAt >= WARN_EVERY_MS) {
                lastWarnAt = now;
                log.warn("Could not arm the table's wake-up flag ({}; SQLState {}): the task claims every {} ms"
                    + " while quiet until it can; the rows are relayed, with up to that much delay", e.getMessage(),
                    e.getSQLState(), LOOK_INTERVAL_MS);
            }
        }
    }

    /**
     * A grant revoked while the task runs: arming again would be refused the same way, an ERROR in the server's log
     * each time, so the task polls instead and its sweeps look for the grant, as at a start without it.
     */
    private void refused(SQLException e, long now) {
        log.warn("The role may no longer use the table's wake-up flag ({}): the task stops using it, claims every {} ms"
            + " while it finds nothing, and looks for the grant at each sweep", e.getMessage(), pollIntervalMs);
        pollWithoutFlag(now, listener);
    }
}
