package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * An in-memory outbox table for unit tests of the relay loop: the row states of docs/row-lifecycle.md
 * and the guards of outbox-relay.sql, on the test's clock. {@link #failNext} makes the next call of one
 * operation fail as PostgreSQL would; {@link #loseNextClaimResult} makes a claim commit its leases and
 * then lose its result with the connection.
 */
final class FakeOutboxStore implements OutboxStore {
    /** One outbox row. */
    static final class Row {
        final long seq;
        final String type;
        final String subject;
        int attempts;
        String leaseOwner;
        long leaseUntil;
        long nextAttemptAt;
        String lastError;
        String fanout;
        String poisonReason;
        /** Its text's bytes, as ClaimRows counts them. */
        long bytes = 2;

        Row(long seq, String type, String subject) {
            this.seq = seq;
            this.type = type;
            this.subject = subject;
        }

        boolean pending() {
            return fanout == null && poisonReason == null;
        }
    }

    final Map<Long, Row> rows = new TreeMap<>();
    final List<List<Long>> extensions = new ArrayList<>();
    final List<List<Release>> releases = new ArrayList<>();
    /** Every reconciliation stamp: the owner, and the seqs it stamped. */
    final List<Map.Entry<String, List<Long>>> recoveries = new ArrayList<>();
    /** Rows given their attempt back with their lease kept (a stop with connector boundaries). */
    final List<Long> attemptsReturned = new ArrayList<>();
    /** Every pass the task made, in order. */
    final List<Pass> passes = new ArrayList<>();
    /** The transactions the test says are in progress (xids as text), as a claim's snapshot sees them. */
    /** The channels {@link #wake} notified, in order. */
    final List<String> wakes = new ArrayList<>();
    private final Map<String, Deque<SQLException>> failures = new TreeMap<>();
    private final LongSupplier clock;
    private static final String EARLIER_INCARNATION = "relay-0#0";
    private String owner = "relay-0#1";
    private int incarnation = 1;
    private final long leaseMs;
    private boolean loseNextClaimResult;
    private long maxClaimBytes = Long.MAX_VALUE;
    private long takeoverUntil = Long.MIN_VALUE;
    private FakeWakeupFlag flag;
    /** The subjects of this task's share (every one unless a test says otherwise: {@link #becomeTask}). */
    private java.util.function.Predicate<String> share = subject -> true;

    FakeOutboxStore(LongSupplier clock, long leaseMs) {
        this.clock = clock;
        this.leaseMs = leaseMs;
    }

    void insert(long seq, String subject) {
        insert(seq, subject, "order.created");
    }

    void insert(long seq, String subject, String type) {
        rows.put(seq, new Row(seq, type, subject));
    }

    Row row(long seq) {
        return rows.get(seq);
    }

    /**
     * The next call of {@code operation} (claim, stamp, release, poison, extend, takeBack, returnAttempts,
     * stampRecovered) fails with this SQLState.
     */
    void failNext(String operation, String sqlState) {
        failures.computeIfAbsent(operation, k -> new ArrayDeque<>())
            .add(new SQLException("test: " + operation + " failed", sqlState));
    }

    /** As ClaimRows' :max_claim_bytes: a claim stops before the row that would take it past this. */
    void maxClaimBytes(long bytes) {
        maxClaimBytes = bytes;
    }

    void loseNextClaimResult() {
        loseNextClaimResult = true;
    }

    /** Whether a failure queued for {@code operation} is still to come (the operation did not run since). */
    boolean failurePending(String operation) {
        Deque<SQLException> queue = failures.get(operation);
        return queue != null && !queue.isEmpty();
    }

    private void maybeFail(String operation) throws SQLException {
        Deque<SQLException> queue = failures.get(operation);
        if (queue != null && !queue.isEmpty()) {
            throw queue.poll();
        }
    }

    @Override
    public String owner() {
        return owner;
    }

    /**
     * As ClaimRows: the stamps, then the rows first in line (one attempted before comes alone first in line,
     * else ends the batch).
     */
    @Override
    public PassResult pass(Pass pass) throws SQLException {
        int stamped = pass.stamps().isEmpty() ? 0 : stamp(pass.stamps(), pass.limit() > 0);
        Claim claim = pass.limit() > 0 ? claimRows(pass.limit()) : Claim.NONE;
        passes.add(pass);
        return new PassResult(stamped, claim);
    }

    private Claim claimRows(int limit) throws SQLException {
        maybeFail("claim");
        long now = clock.getAsLong();
        if (takeoverUntil == Long.MIN_VALUE) {
            takeoverUntil = now + leaseMs;
        }
        List<Row> line = inLine(limit, now);
        List<ClaimedRow> out = new ArrayList<>();
        long bytes = 0;
        for (Row r : line) {
            if (r.attempts > 0 && !out.isEmpty() || !out.isEmpty() && bytes + r.bytes > maxClaimBytes) {
                break;
            }
            bytes += r.bytes;
            boolean expired = r.leaseOwner != null && r.leaseUntil < now;
            boolean takenOver = r.leaseOwner != null && !expired;
            r.leaseOwner = owner;
            r.leaseUntil = now + leaseMs;
            r.attempts++;
            out.add(new ClaimedRow(r.seq, "id-" + r.seq, r.type, r.subject, "{}", 0L, r.attempts, r.lastError, 2,
                null, null, null, expired, takenOver, r.bytes, null));
            if (r.attempts > 1) {
                break;
            }
        }
        if (loseNextClaimResult && !out.isEmpty()) {
            loseNextClaimResult = false;
            throw new SQLException("test: the connection was lost with the claim's result", "08006");
        }
        return out.isEmpty() ? Claim.NONE : new Claim(out, line.size());
    }

    /** As ClaimRows: the first {@code limit} rows in line, in seq order. */
    private List<Row> inLine(int limit, long now) {
        List<Row> line = new ArrayList<>();
        for (Row r : rows.values()) {
            if (line.size() == limit) {
                break;
            }
            if (r.pending() && share.test(r.subject) && (r.leaseOwner == null || r.leaseUntil < now || takeover(r))
                && r.nextAttemptAt <= now) {
                line.add(r);
            }
        }
        return line;
    }

    /** As ClaimRows: an earlier incarnation's lease ending by the horizon of this incarnation's first claim. */
    private boolean takeover(Row r) {
        return r.leaseOwner.startsWith("relay-0#") && !r.leaseOwner.equals(owner) && r.leaseUntil <= takeoverUntil;
    }

    /** The task starts again (after a crash): a new lease owner, whose first claim sets its takeover horizon. */
    void newIncarnation() {
        becomeTask("relay-0", subject -> true);
    }

    /** The store as task {@code taskOwner}'s next incarnation sees it, whose share holds the subjects {@code share} does. */
    void becomeTask(String taskOwner, java.util.function.Predicate<String> share) {
        owner = taskOwner + "#" + (++incarnation);
        this.share = share;
        takeoverUntil = Long.MIN_VALUE;
    }

    /** Leases a row as an earlier incarnation of this task did before it stopped. */
    void leaseAsEarlierIncarnation(long seq) {
        Row r = rows.get(seq);
        r.leaseOwner = EARLIER_INCARNATION;
        r.leaseUntil = clock.getAsLong() + leaseMs;
        r.attempts++;
    }

    /** @param withClaim whether the stamp rides with a claim (its failure is the claim's then too) */
    private int stamp(List<Stamp> stamps, boolean withClaim) throws SQLException {
        maybeFail(withClaim ? "claim" : "stamp");
        int n = 0;
        for (Stamp s : stamps) {
            Row r = rows.get(s.seq());
            if (r.fanout == null) {
                r.fanout = s.fanout();
                r.leaseOwner = null;
                n++;
            }
        }
        return n;
    }

    @Override
    public void release(List<Release> released) throws SQLException {
        maybeFail("release");
        releases.add(released);
        for (Release rel : released) {
            Row r = rows.get(rel.seq());
            if (r.pending() && owner.equals(r.leaseOwner)) {
                r.leaseOwner = null;
                r.attempts = Math.max(0, r.attempts - (rel.returnAttempt() ? 1 : 0));
                r.nextAttemptAt = rel.delayMs() > 0 ? clock.getAsLong() + rel.delayMs() : 0;
                r.lastError = rel.error() == null ? r.lastError : rel.error();
            }
        }
    }

    @Override
    public void returnAttempts(Collection<Long> seqs) throws SQLException {
        maybeFail("returnAttempts");
        for (long seq : seqs) {
            Row r = rows.get(seq);
            if (r.pending() && owner.equals(r.leaseOwner)) {
                r.attempts = Math.max(0, r.attempts - 1);
                attemptsReturned.add(seq);
            }
        }
    }

    /** As RecoverableRows and StampRecovered (the fake's task has the whole table as its share). */
    @Override
    public Recovered stampRecovered(String leaseOwner, long[] seqs, Function<String, String> fanoutOfType)
        throws SQLException {
        maybeFail("stampRecovered");
        List<Long> stamped = new ArrayList<>();
        List<Long> notLeased = new ArrayList<>();
        int already = 0;
        for (long seq : seqs) {
            Row r = rows.get(seq);
            if (r == null || !share.test(r.subject)) {
                continue; // RecoverableRows: only the rows of this task's share
            }
            if (r.pending() && leaseOwner.equals(r.leaseOwner)) {
                r.fanout = fanoutOfType.apply(r.type);
                r.leaseOwner = null;
                stamped.add(seq);
            } else if (r.fanout != null) {
                already++;
            } else {
                notLeased.add(seq);
            }
        }
        recoveries.add(Map.entry(leaseOwner, stamped));
        return new Recovered(stamped.size(), already, notLeased);
    }

    /** Leases a row as {@code leaseOwner} did (an incarnation that is gone). */
    void leaseAs(long seq, String leaseOwner) {
        Row r = rows.get(seq);
        r.leaseOwner = leaseOwner;
        r.leaseUntil = clock.getAsLong() + leaseMs;
        r.attempts++;
    }

    @Override
    public List<PoisonedRow> poison(List<Poison> poisons) throws SQLException {
        maybeFail("poison");
        List<PoisonedRow> out = new ArrayList<>();
        for (Poison p : poisons) {
            Row r = rows.get(p.seq());
            // PoisonRows' guard: not another claimer's, and its attempts as the task last saw them
            if (r.pending() && (r.leaseOwner == null || owner.equals(r.leaseOwner)) && r.attempts == p.attempts()) {
                r.poisonReason = p.reason();
                r.leaseOwner = null;
                out.add(new PoisonedRow(r.seq, "id-" + r.seq, r.type, r.subject, r.attempts, 0L, clock.getAsLong(),
                    p.reason()));
            }
        }
        return out;
    }

    @Override
    public void extend(Collection<Long> seqs) throws SQLException {
        maybeFail("extend");
        extensions.add(List.copyOf(seqs));
        for (long seq : seqs) {
            Row r = rows.get(seq);
            if (r.fanout == null && owner.equals(r.leaseOwner)) {
                r.leaseUntil = clock.getAsLong() + leaseMs;
            }
        }
    }

    @Override
    public List<TakenBack> takeBackUnknownLeases(Collection<Long> held, Collection<Long> keepAttempt)
        throws SQLException {
        maybeFail("takeBack");
        List<TakenBack> out = new ArrayList<>();
        for (Row r : rows.values()) {
            if (r.pending() && owner.equals(r.leaseOwner) && !held.contains(r.seq)) {
                r.leaseOwner = null;
                if (!keepAttempt.contains(r.seq)) {
                    r.attempts = Math.max(0, r.attempts - 1);
                }
                out.add(new TakenBack(r.seq, r.attempts));
            }
        }
        return out;
    }

    /** Backlog probes asked for so far; with {@link #backlogWaits} set, each waits for it first. */
    final AtomicInteger backlogProbes = new AtomicInteger();
    volatile CountDownLatch backlogWaits;

    @Override
    public Backlog backlog() throws SQLException {
        backlogProbes.incrementAndGet();
        CountDownLatch latch = backlogWaits;
        if (latch != null) {
            try {
                latch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("test: interrupted", e);
            }
        }
        synchronized (this) {
            return new Backlog(rows.values().stream().filter(Row::pending).count(), 0);
        }
    }

    @Override
    public int deleteRetained(long retentionMs, int limit) {
        return 0;
    }

    @Override
    public String tableShareConflict() {
        return null;
    }

    @Override
    public void wake(String channel) throws SQLException {
        maybeFail("wake");
        wakes.add(channel);
    }

    @Override
    public ClaimPacer.Flag wakeupFlag() throws SQLException {
        maybeFail("wakeupFlag");
        if (flagNotPermitted) {
            throw new WakeupFlag.NotPermitted("role relay may not use the wake-up flag of the outbox");
        }
        return flag;
    }

    /** The table has a flag the role may not use (true), or the grant is in (false). */
    void flagNotPermitted(boolean notPermitted) {
        flagNotPermitted = notPermitted;
    }

    private boolean flagNotPermitted;

    /** Gives the table a wake-up flag (an outbox.sql table); without one it NOTIFYs on every insert. */
    FakeWakeupFlag withWakeupFlag() {
        flag = new FakeWakeupFlag();
        return flag;
    }
}
