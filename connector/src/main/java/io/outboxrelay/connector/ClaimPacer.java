package io.outboxrelay.connector;

import io.outboxrelay.common.SqlStates;
import java.sql.SQLException;
import java.util.List;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a relay task claims, and when it arms the table's wake-up flag: the one owner of the task's claim
 * timing. Three states (docs/wakeup.md has the diagram, every edge and the test of each):
 * <ul>
 *   <li>ACTIVE: rows keep arriving. The task claims a pace apart (at once after a claim that left rows in line),
 *       the pace and the idle time below coming from {@link ClaimCadence}; the flag stays down, writers send no
 *       NOTIFY, and a NOTIFY that reaches the task changes nothing, so after {@link #DEAF_AFTER_MS} active the task
 *       turns LISTEN off and no NOTIFY of the database wakes its session. Once its claims have found nothing for
 *       the idle time (two claims at least) it turns LISTEN on again and, a pace later, LISTEN in place, arms the
 *       flag; a task polling without a flag it may use goes QUIET instead, LISTEN on again.
 *   <li>SETTLING: armed. A writer that read the flag down just before the arming sends no NOTIFY, so the task
 *       claims until every transaction in progress at the arming has ended as a claim's snapshot sees it.
 *   <li>QUIET: armed and settled: no claim until a NOTIFY, a look that finds the flag's clears count moved
 *       since the arming (a clear whose NOTIFY never reached this task), the sweep or a released row due.
 * </ul>
 * A claim that finds rows makes the task ACTIVE again. Task thread only, except {@link #wake()}.
 */
final class ClaimPacer {
    private static final Logger log = LoggerFactory.getLogger(ClaimPacer.class);

    /** The wake-up flag as the pacer uses it ({@link WakeupFlag} in PostgreSQL). */
    interface Flag {
        /** Arms the flag; returns the count of its clears as the arming leaves it (0 without a count). */
        long arm() throws SQLException;

        /** Whether a writer took the flag down since the arming that returned {@code token}. */
        boolean clearedSince(long token) throws SQLException;

        /** Whether the table counts the clears (migration V4); without, a look reads the flag itself. */
        boolean counted();
    }

    /** The task's LISTEN session as the pacer uses it ({@code PostgresListener}). */
    interface Listener {
        /** No session to control (LISTEN off, or none given yet): its checks do nothing. */
        Listener NONE = new Listener() {
        };

        /** Asks for LISTEN on or off; the session's thread makes the change soon after. */
        default void listen(boolean on) {
        }

        /** Whether a change asked for is not made yet (false while the session is down: looks cover that). */
        default boolean changing() {
            return false;
        }

        /** Asks the session to prove at once that it is alive (a clear came without its NOTIFY). */
        default void checkAlive() {
        }
    }

    enum State { ACTIVE, SETTLING, QUIET }

    /** A claim due now: the transactions to look at, whether to note those in progress, and whether it sweeps. */
    record Claim(List<String> watch, boolean capture, boolean sweep) {
    }

    /** Empty claims in a row, at least, before an active task arms the flag and settles. */
    static final int EMPTY_CLAIMS_BEFORE_ARMING = 2;
    /** How often a quiet task looks whether a writer took the flag down without its NOTIFY reaching the task. */
    static final long LOOK_INTERVAL_MS = 250;
    /** How long after a failed arming the task arms again (claiming, unarmed, meanwhile): a look's interval. */
    static final long ARM_RETRY_MS = 250;
    /** The longest a settling task waits between claims while none of the transactions it watches ends. */
    static final long SETTLE_WAIT_MAX_MS = 250;
    /** The longest a poll() waits without looking at the clock, so that stop() ends it soon. */
    static final long MAX_WAIT_MS = 250;
    /**
     * How long an active task's claims keep finding rows before it turns LISTEN off. PostgreSQL wakes every
     * listening session of the database for each NOTIFY sent there (the write receipts of every stamp, other tasks'
     * wake-ups, the application's own), and an active task needs none of them; turning LISTEN off and on costs two
     * small statements, so a task does it only once it has been busy this long.
     */
    static final long DEAF_AFTER_MS = 1_000;
    /** Covers a database clock a little ahead of the worker's when a released row falls due. */
    static final long RETRY_CLOCK_MARGIN_MS = 100;
    /** At most one warning this often about a flag the task cannot arm or read. */
    private static final long WARN_EVERY_MS = 60_000;

    private Flag flag;
    private final boolean listening;
    /** While quiet, claim every {@code pollIntervalMs}: LISTEN is off, or the table's flag is one the role may not use. */
    private boolean polling;
    private final ClaimCadence cadence;
    private final long sweepIntervalMs;
    private final long pollIntervalMs;
    private Listener listener = Listener.NONE;
    private final TreeSet<Long> retryTimes = new TreeSet<>();
    private volatile State state = State.ACTIVE;
    private volatile boolean woken;
    private long claimAt;
    private long nextSweepAt;
    private long lookAt = Long.MAX_VALUE;
    private int emptyClaims;
    private boolean armDue;
    /** Not before this: an arming failed, and the task claims at its looks until one works. */
    private long armAt = Long.MIN_VALUE;
    private long token;
    private boolean notifiedSinceArming;
    private boolean capture;
    private List<String> watch = List.of();
    private long settleWaitMs;
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
        this.listening = listening;
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
     * The table's flag, once a pass found it (null: none, the trigger NOTIFYs on every insert), and the task's
     * LISTEN session, which a task with the flag (or polling without it) turns off while busy, and which a task with
     * the flag asks to prove it is alive. A flag
     * found later (a sweep's look, after migration V2 was applied while the task ran) makes a quiet task active:
     * its writers NOTIFY only while it is armed, and it arms after the idle time.
     */
    void useFlag(long now, Flag flag, Listener listener) {
        boolean found = this.flag == null && flag != null && listening;
        this.flag = listening ? flag : null;
        this.listener = listener;
        polling = !listening;
        if (found && state == State.QUIET) {
            activate(now);
        }
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

    /** Claim at the next chance (a failed pass, rows given back, rows to stamp while not active). */
    void request(long now) {
        claimAt = Math.min(claimAt, now);
    }

    /** A row was released with a backoff (by this task, or one the claim reported): it is claimable from {@code at} on. */
    void retryAt(long at) {
        retryTimes.add(at);
    }

    /**
     * A row is claimable {@code delayMs} after a statement that ended at {@code now} (a release's backoff, or a delay
     * the claim of an arming reported): claimed no earlier than {@link #RETRY_CLOCK_MARGIN_MS} after that.
     */
    void retryIn(long now, long delayMs) {
        retryAt(now + RETRY_CLOCK_MARGIN_MS + delayMs);
    }

    /** Whether a row released with a backoff is still to be claimed when due: at a stop, others must learn of it. */
    boolean retriesPending() {
        return !retryTimes.isEmpty();
    }

    /**
     * Before a pass: arms the flag or looks at it when due (their failures only delay the wake-up: they never
     * fail the pass or its stamps), and says whether to claim now. Without {@code room} nothing is used up.
     */
    Claim next(long now, boolean room) {
        takeWake(now);
        if (state == State.QUIET && flag != null && now >= lookAt) {
            look(now);
        }
        boolean sweep = now >= nextSweepAt;
        boolean retry = !retryTimes.isEmpty() && retryTimes.first() <= now;
        if (!room || !(now >= claimAt || sweep || retry)) {
            return null;
        }
        if (armDue && now >= armAt) {
            if (listener.changing()) {
                armAt = now + cadence.paceMs(); // LISTEN is being turned on again: this claim goes unarmed, the arming a pace later
            } else {
                arm(now);
            }
        }
        if (sweep) {
            nextSweepAt = now + sweepIntervalMs;
        }
        retryTimes.headSet(now, true).clear();
        return new Claim(state == State.SETTLING ? watch : List.of(), capture, sweep);
    }

    /** A wake() since the last pass (a NOTIFY, or LISTEN in place again): claiming is active from now on. */
    private void takeWake(long now) {
        if (!woken) {
            return;
        }
        woken = false;
        notifiedSinceArming = true;
        if (state != State.ACTIVE) {
            activate(now);
        }
    }

    /**
     * After a claim: {@code rows} it leased, {@code more} when rows may wait in line; {@code running}, of the
     * transactions it was to look at, those still in progress in its snapshot; {@code inProgress} the
     * transactions in progress in its snapshot when it was to note them (else null).
     */
    void claimed(long now, int rows, boolean more, List<String> running, List<String> inProgress) {
        capture = false;
        if (more || rows > 0) {
            activate(now);
            long pace = cadence.rowsFound(now, rows);
            hearLess(now);
            claimAt = more ? now : now + pace;
            return;
        }
        switch (state) {
            case ACTIVE -> {
                emptyClaims++;
                long pace = cadence.nothingFound(now);
                boolean idle = emptyClaims >= EMPTY_CLAIMS_BEFORE_ARMING && cadence.idle(now);
                if (idle && flag != null) {
                    armDue = true;
                    // arm, then claim once more, noting the transactions in progress; LISTEN first if it was off
                    claimAt = Math.max(hearAgain() ? now + pace : now, armAt);
                } else if (idle) {
                    hearAgain(); // deaf only while polling: a NOTIFY (a requeue, another task's stop) wakes it before its poll
                    quiet(now);
                } else {
                    claimAt = now + pace;
                }
            }
            case SETTLING -> settle(now, inProgress != null ? inProgress : running, inProgress == null);
            case QUIET -> claimAt = polling ? now + pollIntervalMs : Long.MAX_VALUE;
        }
    }

    /**
     * How long an idle poll() may wait for a wake-up before something falls due. Without room no claim can be
     * due (an acknowledgement wakes the task when it makes room), only a look.
     */
    long waitMs(long now, boolean room) {
        if (woken && state != State.ACTIVE) {
            return 0;
        }
        long until = lookAt;
        if (room) {
            until = Math.min(until, Math.min(claimAt, nextSweepAt));
            if (!retryTimes.isEmpty()) {
                until = Math.min(until, retryTimes.first());
            }
        }
        return Math.max(0, Math.min(MAX_WAIT_MS, until - now));
    }

    /** {@code outbox.linger.ms}: the soonest a task not busy stamps what was acknowledged. */
    long paceMs() {
        return cadence.paceMs();
    }

    /**
     * A claim found rows: once the task has been active for {@link #DEAF_AFTER_MS} since its first claim with rows
     * (claims that find nothing short of the idle time do not break that, only {@link #hearAgain()} does), LISTEN
     * goes off. Only with the wake-up flag, or while polling (it turns LISTEN on again as it goes quiet): without
     * the flag (an older table) a quiet task relies on every writer's NOTIFY, with no arming before which LISTEN
     * could be turned on again.
     */
    private void hearLess(long now) {
        if (activeSince == Long.MIN_VALUE) {
            activeSince = now;
        } else if (!deaf && (flag != null || polling && listening) && now - activeSince >= DEAF_AFTER_MS) {
            deaf = true;
            listener.listen(false);
        }
    }

    /**
     * The claims found nothing for the idle time: the arming comes next, and it needs LISTEN in place.
     *
     * @return whether LISTEN was off and is asked for now (the arming waits for it: no claim before a pace)
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
        }
        state = State.ACTIVE;
        emptyClaims = 0;
        armDue = false;
        watch = List.of();
        lookAt = Long.MAX_VALUE;
        claimAt = Math.min(claimAt, now);
    }

    private void arm(long now) {
        try {
            token = flag.arm();
        } catch (SQLException e) {
            if (SqlStates.is(e, SqlStates.INSUFFICIENT_PRIVILEGE)) {
                refused(e, now); // this claim goes ahead unarmed, and the next ones
                return;
            }
            warn("arm the table's wake-up flag", e, now);
            armAt = now + ARM_RETRY_MS; // this claim goes ahead unarmed; the next one, and arming, a look later
            return;
        }
        armDue = false;
        notifiedSinceArming = false;
        state = State.SETTLING;
        capture = true;
        settleWaitMs = cadence.paceMs();
    }

    /**
     * A settling claim found nothing. Each time some of the watched transactions have ended the task claims
     * again a pace later (they may have committed rows no NOTIFY tells of), the wait doubling up to
     * {@link #SETTLE_WAIT_MAX_MS} while none ends, and once none is left it is quiet.
     */
    private void settle(long now, List<String> running, boolean compared) {
        boolean ended = compared && running.size() < watch.size();
        watch = running;
        if (running.isEmpty()) {
            quiet(now);
            return;
        }
        settleWaitMs = ended || !compared ? cadence.paceMs() : Math.min(settleWaitMs * 2, SETTLE_WAIT_MAX_MS);
        claimAt = now + settleWaitMs;
    }

    private void quiet(long now) {
        state = State.QUIET;
        watch = List.of();
        claimAt = polling ? now + pollIntervalMs : Long.MAX_VALUE;
        lookAt = flag == null ? Long.MAX_VALUE : now + LOOK_INTERVAL_MS;
    }

    private void look(long now) {
        lookAt = now + LOOK_INTERVAL_MS;
        boolean cleared;
        try {
            cleared = flag.clearedSince(token);
        } catch (SQLException e) {
            if (SqlStates.is(e, SqlStates.INSUFFICIENT_PRIVILEGE)) {
                refused(e, now);
                activate(now); // it cannot tell: claim, then poll (a refusal says nothing of the LISTEN session)
                return;
            }
            warn("look at the table's wake-up flag", e, now);
            cleared = true; // claiming is what a look that cannot tell must do
        }
        if (cleared) {
            if (!notifiedSinceArming) {
                listener.checkAlive(); // a rollback does this too, but so does a LISTEN session that died unseen
            }
            activate(now);
        }
    }

    /**
     * A grant revoked while the task runs: arming or looking again would be refused the same way, an ERROR in the
     * server's log each time, so the task polls instead and its sweeps look for the grant, as at a start without it.
     */
    private void refused(SQLException e, long now) {
        log.warn("The role may no longer use the table's wake-up flag ({}): the task stops using it, claims every {} ms"
            + " while it finds nothing, and looks for the grant at each sweep", e.getMessage(), pollIntervalMs);
        armDue = false;
        pollWithoutFlag(now, listener);
    }

    private void warn(String what, SQLException e, long now) {
        if (lastWarnAt == Long.MIN_VALUE || now - lastWarnAt >= WARN_EVERY_MS) {
            lastWarnAt = now;
            log.warn("Could not {} ({}; SQLState {}): the task claims every {} ms instead until it can; the rows are"
                + " relayed, with up to that much delay", what, e.getMessage(), e.getSQLState(), ARM_RETRY_MS);
        }
    }
}
