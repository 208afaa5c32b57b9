package io.outboxrelay.connector;

/**
 * How far apart an active task's claims are, and how long they must find nothing before the task arms the wake-up
 * flag (after a spell that found rows; one that found none ends at its second, {@link ClaimPacer}): arithmetic
 * over when the task's claims found how many rows. It holds no state of the wake-up and decides no edge of it;
 * {@link ClaimPacer} tells it what each active claim found and asks it for the pace and whether the idle time is over
 * (docs/wakeup.md, "ACTIVE: a claim every pace" and "The idle time"). Task thread only.
 */
final class ClaimCadence {
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
    /** How much of the task's arrival rate (and its mean gap) each claim's own reading makes up. */
    static final double RATE_SMOOTHING = 0.3;
    /**
     * How long an active task's claims find nothing, in a spell that found rows, before it arms: a shorter gap in
     * the rows of its share is no reason to make the next writer NOTIFY and every quiet task of the table claim.
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

    private final long paceMs;
    private final long maxPaceMs;
    /** When the last claim of this active spell ended (MIN_VALUE: none yet), and the rows per ms since. */
    private long lastClaimAt = Long.MIN_VALUE;
    private double rowsPerMs = -1;
    /** When a claim last found rows: the idle time counts from here. */
    private long lastRowsAt;
    /** The share's mean gap between rows as the claims that found rows measured it, in ms (-1: not yet). */
    private double gapMs = -1;

    /**
     * @param paceMs    {@code outbox.linger.ms}: between claims while rows keep arriving (at least 1)
     * @param maxPaceMs {@code outbox.linger.max.ms}: between claims while each brings few rows (at least
     *                  {@code paceMs})
     */
    ClaimCadence(long now, long paceMs, long maxPaceMs) {
        this.paceMs = Math.max(1, paceMs);
        this.maxPaceMs = Math.max(this.paceMs, maxPaceMs);
        this.lastRowsAt = now;
    }

    /** {@code outbox.linger.ms}: the shortest pace. */
    long paceMs() {
        return paceMs;
    }

    /** A new active spell begins: its first claim tells nothing of the rate. */
    void newSpell() {
        lastClaimAt = Long.MIN_VALUE;
    }

    /**
     * An active claim found {@code rows} (or left rows in line, with any count): the gap it closes counts, and the
     * pace before the next claim comes back.
     */
    long rowsFound(long now, int rows) {
        if (rows > 0) {
            // the time since the last claim that found rows (a quiet spell counts too, up to GAP_SAMPLE_MAX_MS)
            double sample = Math.min(now - lastRowsAt, GAP_SAMPLE_MAX_MS) / (double) rows;
            gapMs = smooth(gapMs, sample);
        }
        lastRowsAt = now;
        return pace(now, rows);
    }

    /** An active claim found nothing: the pace before the next one. */
    long nothingFound(long now) {
        return pace(now, 0);
    }

    /**
     * Whether the claims have found nothing for the idle time: {@link #IDLE_GAPS_BEFORE_ARMING} of the share's mean
     * gap between rows when that is longer than {@link #IDLE_BEFORE_ARMING_MS} and not longer than
     * {@link #IDLE_BEFORE_ARMING_MAX_MS}; otherwise (a dense share, a sparse one, or no gap measured yet)
     * {@link #IDLE_BEFORE_ARMING_MS}.
     */
    boolean idle(long now) {
        long gaps = Math.round(IDLE_GAPS_BEFORE_ARMING * gapMs);
        long idleMs = gapMs < 0 || gaps > IDLE_BEFORE_ARMING_MAX_MS
            ? IDLE_BEFORE_ARMING_MS
            : Math.max(IDLE_BEFORE_ARMING_MS, gaps);
        return now - lastRowsAt >= idleMs;
    }

    /**
     * {@code outbox.linger.ms} at a rate that brings {@link #ROWS_PER_CLAIM_AIMED} rows in that time or more, longer
     * at a lower rate, never longer than {@code outbox.linger.max.ms}. The first claim of a spell waits the shortest
     * pace: the rows it found tell nothing of how long they took to come.
     */
    private long pace(long now, int rows) {
        if (lastClaimAt == Long.MIN_VALUE) {
            lastClaimAt = now;
            rowsPerMs = -1;
            return paceMs;
        }
        double sample = rows / (double) Math.max(1, now - lastClaimAt);
        lastClaimAt = now;
        rowsPerMs = smooth(rowsPerMs, sample);
        // no rows at all: the division is infinite and the pace the longest
        return Math.max(paceMs, Math.min(maxPaceMs, Math.round(ROWS_PER_CLAIM_AIMED / rowsPerMs)));
    }

    /** {@code average} moved {@link #RATE_SMOOTHING} of the way to {@code sample}; the sample itself when none yet (-1). */
    private static double smooth(double average, double sample) {
        return average < 0 ? sample : average + RATE_SMOOTHING * (sample - average);
    }
}
