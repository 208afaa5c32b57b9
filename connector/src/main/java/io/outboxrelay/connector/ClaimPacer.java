package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.List;
import java.util.PriorityQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a relay task claims, and when it arms the table's wake-up flag: the one owner of the task's claim
 * timing. Three states (docs/wakeup.md has the diagram, every edge and the test of each):
 * <ul>
 *   <li>ACTIVE: rows keep arriving. The task claims every {@code outbox.linger.ms} (at once after a claim that
 *       left rows in line), spacing its claims out up to {@code outbox.linger.max.ms} while they bring fewer than
 *       {@link #ROWS_PER_CLAIM_AIMED} rows; the flag stays down, writers send no NOTIFY, and a NOTIFY that reaches
 *       the task changes nothing, so after {@link #DEAF_AFTER_MS} active the task turns LISTEN off and no NOTIFY
 *       of the database wakes its session. Once its claims have found nothing for the idle time (two claims at
 *       least; {@link #IDLE_BEFORE_ARMING_MS}, or {@link #IDLE_GAPS_BEFORE_ARMING} of its share's mean gap between
 *       rows when that is longer and at most {@link #IDLE_BEFORE_ARMING_MAX_MS}) it turns LISTEN on again and, a
 *       pace later, LISTEN in place, arms the flag.
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
    /**
     * How long an active task's claims find nothing before it arms: a shorter gap in the rows of its share is
     * no reason to make the next writer NOTIFY and every quiet task of the table claim.
     */
    static final long IDLE_BEFORE_ARMING_MS = 100;
    /**
     * At a rate that brings a share a row only every few tens of milliseconds (many tasks, a moderate rate), a gap of
     * {@link #IDLE_BEFORE_ARMING_MS} is common: arming then would make the next writer NOTIFY and every quiet task
     * wake and claim, several times a second. So the idle time is this many of the share's mean gaps between rows
     * when that is longer (a gap that long comes once in some 150 with rows arriving at random).
     */
    static final int IDLE_GAPS_BEFORE_ARMING = 5;
    /**
     * The longest idle time that many gaps may make. A share sparser than that (a row every more than 100 ms) costs
     * less woken for each row than claimed for through its gaps at {@code outbox.linger.max.ms}: it arms after
     * {@link #IDLE_BEFORE_ARMING_MS}.
     */
    static final long IDLE_BEFORE_ARMING_MAX_MS = 500;
    /**
     * The longest gap one claim's sample counts: twice the longest that the idle time follows, so that one quiet
     * spell (the gap before a task woken by a NOTIFY finds its row) weighs no more than a sparse share's gap.
     */
    static final long GAP_SAMPLE_MAX_MS = 2 * IDLE_BEFORE_ARMING_MAX_MS / IDLE_GAPS_BEFORE_ARMING;
    /** How often a quiet task looks whether a writer took the flag down without its NOTIFY reaching the task. */
    static final long LOOK_INTERVAL_MS = 250;
    /** How long after a failed arming the task arms again (claiming, unarmed, meanwhile): a look's interval. */
    static final long ARM_RETRY_MS = 250;
    /** The longest a settling task waits between claims while none of the transactions it watches ends. */
    static final long SETTLE_WAIT_MAX_MS = 250;
    /** The longest a poll() waits without looking at the clock, so that stop() ends it soon. */
    static final long MAX_WAIT_MS = 250;
    /**
     * Rows an active task aims to find per claim. At a rate that brings fewer in {@code outbox.linger.ms}, what a
     * claim costs (a statement, a list of records, a produce request: several ms of CPU over the database, the
     * worker and the broker on a small machine, bench/README.md) is paid for a handful of rows: the task spaces its
     * claims out so that one brings about this many, up to {@code outbox.linger.max.ms} apart. 12 keeps a task at
     * 1,000 events/s near {@code outbox.linger.ms} (12 ms) while a task at 250 events/s claims every 48 ms instead of
     * every 32 (500 events/s on 2 tasks: 0.08 claims per event instead of 0.11 with 8 rows and 40 ms, 0.18 with 8
     * and 20; bench/TUNING.md).
     */
    static final int ROWS_PER_CLAIM_AIMED = 12;
    /**
     * How long an active task's claims keep finding rows before it turns LISTEN off. PostgreSQL wakes every
     * listening session of the database for each NOTIFY sent there (the write receipts of every stamp, other tasks'
     * wake-ups, the application's own), and an active task needs none of them; turning LISTEN off and on costs two
     * small statements, so a task does it only once it has been busy this long.
     */
    static final long DEAF_AFTER_MS = 1_000;
    /** How much of the task's arrival rate each claim's own reading makes up (an exponential average). */
    static final double RATE_SMOOTHING = 0.3;
    /** At most one warning this often about a flag the task cannot arm or read. */
    private static final long WARN_EVERY_MS = 60_000;

    private Flag flag;
    private final boolean listening;
    private final long paceMs;
    private final long maxPaceMs;
    private final long sweepIntervalMs;
    private final long pollIntervalMs;
    private Listener listener = Listener.NONE;
    private final PriorityQueue<Long> retryTimes = new PriorityQueue<>();
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
    /** When the task's last claim found rows: the idle time before arming counts from here. */
    private long lastRowsAt;
    private long lastWarnAt = Long.MIN_VALUE;
    /** When the last claim of this active spell ended (MIN_VALUE: none yet), and the rows per ms since. */
    private long lastActiveClaimAt = Long.MIN_VALUE;
    private double rowsPerMs = -1;
    /** The share's mean gap between rows as the claims that found rows measured it, in ms (-1: not yet). */
    private double gapMs = -1;
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
        this.paceMs = Math.max(1, paceMs);
        this.maxPaceMs = Math.max(this.paceMs, maxPaceMs);
        this.sweepIntervalMs = sweepIntervalMs;
        this.pollIntervalMs = pollIntervalMs;
        this.claimAt = now;
        this.lastRowsAt = now;
        this.nextSweepAt = now + sweepIntervalMs;
    }

    State state() {
        return state;
    }

    /**
     * The table's flag, once the first pass found it (null: none, the trigger NOTIFYs on every insert), and the
     * task's LISTEN session, which only a task with the flag turns off while busy and asks to prove it is alive.
     */
    void useFlag(Flag flag, Listener listener) {
        this.flag = listening ? flag : null;
        this.listener = listener;
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

    /** A failed row was released with a backoff: it is claimable again from {@code at} on. */
    void retryAt(long at) {
        retryTimes.add(at);
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
        boolean retry = !retryTimes.isEmpty() && retryTimes.peek() <= now;
        if (!room || !(now >= claimAt || sweep || retry)) {
            return null;
        }
        if (armDue && now >= armAt) {
            if (listener.changing()) {
                armAt = now + paceMs; // LISTEN is being turned on again: this claim goes unarmed, the arming a pace later
            } else {
                arm(now);
            }
        }
        if (sweep) {
            nextSweepAt = now + sweepIntervalMs;
        }
        while (!retryTimes.isEmpty() && retryTimes.peek() <= now) {
            retryTimes.poll();
        }
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
            measureGap(now, rows);
            hearLess(now);
            long pace = activePace(now, rows);
            claimAt = more ? now : now + pace;
            return;
        }
        switch (state) {
            case ACTIVE -> {
                emptyClaims++;
                long pace = activePace(now, 0);
                boolean idle = emptyClaims >= EMPTY_CLAIMS_BEFORE_ARMING && now - lastRowsAt >= idleBeforeArming();
                if (idle && flag != null) {
                    armDue = true;
                    // arm, then claim once more, noting the transactions in progress; LISTEN first if it was off
                    claimAt = Math.max(hearAgain() ? now + pace : now, armAt);
                } else if (idle) {
                    quiet(now);
                } else {
                    claimAt = now + pace;
                }
            }
            case SETTLING -> settle(now, inProgress != null ? inProgress : running, inProgress == null);
            case QUIET -> claimAt = listening ? Long.MAX_VALUE : now + pollIntervalMs;
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
                until = Math.min(until, retryTimes.peek());
            }
        }
        return Math.max(0, Math.min(MAX_WAIT_MS, until - now));
    }

    /** {@code outbox.linger.ms}: the soonest a task not busy stamps what was acknowledged. */
    long paceMs() {
        return paceMs;
    }

    /**
     * The wait before an active task's next claim, from the rows its claims found: {@code outbox.linger.ms} at a
     * rate that brings {@link #ROWS_PER_CLAIM_AIMED} rows in that time or more, longer at a lower rate, never
     * longer than {@code outbox.linger.max.ms}. The first claim of an active spell waits the shortest pace: the
     * rows it found tell nothing of how long they took to come.
     */
    private long activePace(long now, int rows) {
        if (lastActiveClaimAt == Long.MIN_VALUE) {
            lastActiveClaimAt = now;
            rowsPerMs = -1;
            return paceMs;
        }
        double sample = rows / (double) Math.max(1, now - lastActiveClaimAt);
        lastActiveClaimAt = now;
        rowsPerMs = rowsPerMs < 0 ? sample : rowsPerMs + RATE_SMOOTHING * (sample - rowsPerMs);
        // no rows at all: the division is infinite and the pace the longest
        return Math.max(paceMs, Math.min(maxPaceMs, Math.round(ROWS_PER_CLAIM_AIMED / rowsPerMs)));
    }

    /**
     * How long an active task's claims find nothing before it arms: {@link #IDLE_GAPS_BEFORE_ARMING} of the share's
     * mean gap between rows as its claims with rows measured it, when that is longer than
     * {@link #IDLE_BEFORE_ARMING_MS} and not longer than {@link #IDLE_BEFORE_ARMING_MAX_MS}; otherwise (a dense share,
     * a sparse one, or no gap measured yet) {@link #IDLE_BEFORE_ARMING_MS}.
     */
    private long idleBeforeArming() {
        long gaps = Math.round(IDLE_GAPS_BEFORE_ARMING * gapMs);
        return gapMs < 0 || gaps > IDLE_BEFORE_ARMING_MAX_MS ? IDLE_BEFORE_ARMING_MS : Math.max(IDLE_BEFORE_ARMING_MS, gaps);
    }

    /**
     * A claim found {@code rows} (or left rows in line): the time since the last one that did, or since the start (a
     * quiet spell included: it is a gap of the share's too, counted up to {@link #GAP_SAMPLE_MAX_MS}), spread over
     * them.
     */
    private void measureGap(long now, int rows) {
        if (rows > 0) {
            double sample = Math.min(now - lastRowsAt, GAP_SAMPLE_MAX_MS) / (double) rows;
            gapMs = gapMs < 0 ? sample : gapMs + RATE_SMOOTHING * (sample - gapMs);
        }
        lastRowsAt = now;
    }

    /**
     * A claim found rows: once the task has been active for {@link #DEAF_AFTER_MS} since its first claim with rows
     * (claims that find nothing short of the idle time do not break that, only {@link #hearAgain()} does), LISTEN
     * goes off. Only with the wake-up flag: without it (an older table) a quiet task relies on every writer's NOTIFY,
     * with no arming before which LISTEN could be turned on again.
     */
    private void hearLess(long now) {
        if (activeSince == Long.MIN_VALUE) {
            activeSince = now;
        } else if (!deaf && flag != null && now - activeSince >= DEAF_AFTER_MS) {
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
            lastActiveClaimAt = Long.MIN_VALUE; // a new spell: its first claim tells nothing of the rate
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
            warn("arm the table's wake-up flag", e, now);
            armAt = now + ARM_RETRY_MS; // this claim goes ahead unarmed; the next one, and arming, a look later
            return;
        }
        armDue = false;
        notifiedSinceArming = false;
        state = State.SETTLING;
        capture = true;
        settleWaitMs = paceMs;
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
        settleWaitMs = ended || !compared ? paceMs : Math.min(settleWaitMs * 2, SETTLE_WAIT_MAX_MS);
        claimAt = now + settleWaitMs;
    }

    private void quiet(long now) {
        state = State.QUIET;
        watch = List.of();
        claimAt = listening ? Long.MAX_VALUE : now + pollIntervalMs;
        lookAt = flag == null ? Long.MAX_VALUE : now + LOOK_INTERVAL_MS;
    }

    private void look(long now) {
        lookAt = now + LOOK_INTERVAL_MS;
        boolean cleared;
        try {
            cleared = flag.clearedSince(token);
        } catch (SQLException e) {
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

    private void warn(String what, SQLException e, long now) {
        if (lastWarnAt == Long.MIN_VALUE || now - lastWarnAt >= WARN_EVERY_MS) {
            lastWarnAt = now;
            log.warn("Could not {} ({}; SQLState {}): the task claims every {} ms instead until it can; the rows are"
                + " relayed, with up to that much delay", what, e.getMessage(), e.getSQLState(), ARM_RETRY_MS);
        }
    }
}
