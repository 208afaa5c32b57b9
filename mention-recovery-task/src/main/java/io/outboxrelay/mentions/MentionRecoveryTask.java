package io.outboxrelay.mentions;

import io.outboxrelay.common.Backoff;
import io.outboxrelay.common.ConnectKeys;
import io.outboxrelay.common.ListCommits;
import io.outboxrelay.common.MonotonicClock;
import io.outboxrelay.common.TaskMetricsRegistry;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The mention-recovery companion task: finds committed chat messages whose mention pass never
 * completed ({@code mentions_routed_at IS NULL}), routes their @mentions of agent members with the one
 * grammar and policy, writes owed rows for the OWED arm, publishes one record per routed member, and
 * marks each message once every one of its records was acknowledged. It scans at start, on NOTIFY and
 * periodically; one batch is in flight at a time. A database error in a pass ends the pass, which is
 * retried with backoff. A failed mark is retried with backoff too, and no batch is read until the
 * delivered messages are marked (or the next pass would publish them again), unless the database refuses one
 * message's own row (that message alone is set aside, {@link #unmarkable}); a mark a retry cannot fix
 * (a missing grant) is logged at ERROR naming the fix, and retried the same way, so the task carries on
 * by itself once the fix is in. Neither fails the task.
 */
public class MentionRecoveryTask extends SourceTask {
    private static final Logger log = LoggerFactory.getLogger(MentionRecoveryTask.class);
    static final Duration MAX_POLL_WAIT = Duration.ofMillis(500);
    /** How many faulty messages the task remembers having reported at ERROR. */
    static final int REPORTED_FAULTS = 10_000;
    /** How many set-aside messages' marks a pass tries again at its start, one statement each. */
    static final int SET_ASIDE_RETRIES = 100;
    /**
     * The most records one batch makes, short of one message's own: a batch of {@code mentions.batch.size} messages
     * that each ping {@code @all} in a channel of thousands of agents would otherwise hold millions of records in the
     * worker's heap at once. The messages past it are read again with the next batch.
     */
    static final int MAX_RECORDS_PER_BATCH = 10_000;

    /** Opens the database side of the task; tests pass a fake store instead. */
    @FunctionalInterface
    interface DatabaseOpener {
        OpenedDatabase open(MentionRecoveryConfig config, ScanTrigger trigger);
    }

    /** Who else scans the database's messages: null when this task does ({@link ScanLock}). */
    @FunctionalInterface
    interface ScanGuard {
        String otherScanner() throws SQLException;
    }

    /**
     * The store, what to close on stop (pool, listener, the scan's session), the guard of the scan, and whether the
     * LISTEN session answers but hears nothing ({@code PostgresListener.hearsNothing}).
     */
    record OpenedDatabase(MentionStore store, AutoCloseable closer, ScanGuard scan, BooleanSupplier hearsNothing) {
        /** A database whose LISTEN session, if any, is not known to hear nothing. */
        OpenedDatabase(MentionStore store, AutoCloseable closer, ScanGuard scan) {
            this(store, closer, scan, () -> false);
        }

        /** A database whose scan no other task can hold: unit tests' fakes. */
        OpenedDatabase(MentionStore store, AutoCloseable closer) {
            this(store, closer, () -> null);
        }
    }

    private final Clock clock;
    private final Clock timers;
    private final DatabaseOpener opener;
    private final Duration maxPollWait;
    private final MentionRecoveryMetrics metrics = new MentionRecoveryMetrics();
    private TaskMetricsRegistry metricsRegistry;

    private MentionRecoveryConfig config;
    private MentionStore store;
    private ScanGuard scan;
    /** The other session that held the scan at the last look, or null: this task holds it, or has not looked. */
    private String scanHeldBy;
    private volatile AutoCloseable resources;
    private volatile ScanTrigger trigger;
    private volatile boolean stopping;
    private volatile boolean toleranceAll;
    private final AtomicBoolean warnedUndelivered = new AtomicBoolean();
    private final ReportedFaults reportedFaults = new ReportedFaults(REPORTED_FAULTS);
    /**
     * Delivered messages whose own mark fails on their row's values (a constraint, a trigger): left unmarked, and not
     * published again while the task runs (a restart does, once); at most {@link #REPORTED_FAULTS}. Task thread only.
     */
    private final Map<MentionOffsets.Named, String> unmarkable = new LinkedHashMap<>();
    private MentionAckTracker acks;
    private Backoff backoff;
    private MentionPass pass;
    /**
     * Delivered messages not yet marked, in acknowledgement order: kept when a retriable mark fails and
     * retried once {@link #markBackoff} allows. While it is not empty no batch is read, so it holds at
     * most one batch. Task thread only.
     */
    private final Set<MentionOffsets.Named> unmarked = new LinkedHashSet<>();
    private Backoff markBackoff;
    /** When the pending marks may be tried again ({@code timers} millis); 0 when no mark has failed. */
    private long markRetryAtMs;
    /** Whether records name their messages in their source offsets ({@code errors.tolerance=none}). */
    private boolean namesMessages;
    /** Non-null with connector-defined transaction boundaries: this task ends each list's transaction. */
    private TransactionContext transactions;
    /** What Connect will acknowledge only with a later transaction, being filtered whole (ListCommits). */
    private volatile ListCommits listCommits;
    /** The messages the committed offset named at start: marked before the first pass. */
    private List<MentionOffsets.Named> namedAtStart = List.of();
    /** The records of the last list returned; settled here if Connect never does (ListCommits). */
    private List<SourceRecord> lastList = List.of();
    /** The list unsettled at the last poll, noted on an exactly-once worker (ListCommits); null when not noted. */
    private List<SourceRecord> unsettledAtLastPoll;

    public MentionRecoveryTask() {
        this(Clock.systemUTC(), new MonotonicClock(), MentionDatabase::open, MAX_POLL_WAIT);
    }

    /** One clock for the times written and compared with the messages' times, and for the timers. */
    MentionRecoveryTask(Clock clock, DatabaseOpener opener, Duration maxPollWait) {
        this(clock, clock, opener, maxPollWait);
    }

    /**
     * @param clock  the wall clock: the times written (owed, routed) and compared with the messages' and
     *               sessions' times
     * @param timers the scan schedule and the mark retries: a wall clock stepped back must not hold them up
     */
    MentionRecoveryTask(Clock clock, Clock timers, DatabaseOpener opener, Duration maxPollWait) {
        this.clock = clock;
        this.timers = timers;
        this.opener = opener;
        this.maxPollWait = maxPollWait;
    }

    @Override
    public String version() {
        String v = MentionRecoveryTask.class.getPackage().getImplementationVersion();
        return v == null ? "unknown" : v;
    }

    @Override
    public void start(Map<String, String> props) {
        config = new MentionRecoveryConfig(props);
        stopping = false;
        trigger = new ScanTrigger(timers, config.scanInterval());
        acks = new MentionAckTracker(trigger::wake);
        backoff = new Backoff();
        markBackoff = new Backoff();
        markRetryAtMs = 0;
        unmarked.clear();
        pass = null;
        toleranceAll = ConnectKeys.toleratesAllErrors(props);
        namesMessages = !toleranceAll;
        transactions = context == null ? null : context.transactionContext();
        listCommits = ListCommits.of(context, props);
        lastList = List.of();
        if (!config.enabled()) {
            log.info("Mention recovery is disabled ({}=false); the task stays idle", MentionRecoveryConfig.ENABLED);
            return;
        }
        if (transactions != null && toleranceAll) {
            throw new ConnectException("transaction.boundary=connector needs errors.tolerance=none: under"
                + " errors.tolerance=all a dropped record is acknowledged like a filtered one (docs/exactly-once.md,"
                + " 3.10)");
        }
        namedAtStart = namesMessages ? readNamed() : List.of();
        OpenedDatabase db = opener.open(config, trigger);
        store = db.store();
        resources = db.closer();
        scan = db.scan();
        scanHeldBy = null;
        metricsRegistry = TaskMetricsRegistry.register(context, "mentions", config.connectorName(),
            config.taskId("0"), metrics.gauges(db.hearsNothing()));
        trigger.request(ScanTrigger.Kind.START);
        log.info("Mention recovery task started: topic {}, batch size {}, periodic scan every {} ms over messages "
                + "older than {} ms, sessions live for {} ms, {}", config.topic(), config.batchSize(),
            config.scanInterval().toMillis(), config.minAge().toMillis(), config.sessionLive().toMillis(),
            config.notifyChannel().map(c -> "LISTEN " + c).orElse("LISTEN disabled"));
    }

    /**
     * The messages the committed source offset names: their records are in Kafka (committed, or acknowledged
     * without exactly-once) and their mark may be missing (docs/exactly-once.md, 3.12).
     */
    private List<MentionOffsets.Named> readNamed() {
        if (context == null || context.offsetStorageReader() == null) {
            return List.of();
        }
        Map<String, Object> value;
        try {
            value = context.offsetStorageReader().offset(RecoveredMentions.SOURCE_PARTITION);
        } catch (RuntimeException e) {
            throw new ConnectException("Mention recovery could not read its committed source offset, which names the"
                + " messages published before a crash and not yet marked: " + e.getMessage() + ". Check that the"
                + " broker is reachable, then restart the task.", e);
        }
        try {
            List<MentionOffsets.Named> named = MentionOffsets.parse(value);
            if (!named.isEmpty()) {
                log.info("Mention recovery: the committed source offset names {} message(s) published and maybe not"
                    + " marked; they are marked before the first pass", named.size());
            }
            return named;
        } catch (IllegalArgumentException e) {
            log.warn("Mention recovery: ignoring its committed source offset ({}); the messages it named, if any"
                + " were not marked, are published again", e.getMessage());
            return List.of();
        }
    }

    /**
     * Marks the messages acknowledged since the last call, then continues the current pass (once its
     * batch has settled) or starts a due one, and returns that batch's records. Returns null, after
     * waiting at most {@link #MAX_POLL_WAIT}, while records are in flight, while delivered messages wait
     * for a mark to be retried, or when nothing is due.
     */
    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        ScanTrigger t = trigger;
        if (store == null || stopping) {
            if (t != null) {
                t.awaitSignal(maxPollWait);
            }
            return null;
        }
        if (!namedAtStart.isEmpty() && !markNamedAtStart()) {
            t.awaitSignal(Duration.ofMillis(Math.min(maxPollWait.toMillis(), markRetryAtMs - timers.millis())));
            return null;
        }
        settleFilteredList(listCommits.atPoll());
        boolean settled = acks.allSettled(); // read first: a settled message was queued before it counted
        unmarked.addAll(acks.drainAcked());
        markPending();
        if (!unmarked.isEmpty()) {
            // delivered but not marked: a batch read now would publish them again
            t.awaitSignal(Duration.ofMillis(Math.min(maxPollWait.toMillis(), markRetryAtMs - timers.millis())));
            return null;
        }
        if (pass != null) {
            if (!settled) {
                t.awaitSignal(maxPollWait);
                return null;
            }
            int undelivered = acks.drainUndeliveredMessages();
            pass.undelivered(undelivered);
            metrics.undelivered(undelivered);
            if (!pass.hasMoreBatches()) {
                finishPass();
            }
        }
        if (pass == null) {
            ScanTrigger.Kind kind = t.takeDue();
            if (kind == null) {
                t.awaitDue(maxPollWait);
                return null;
            }
            markSetAsideAgain();
            pass = new MentionPass(kind, config.batchSize(), System.nanoTime());
        }
        return holdsScan() ? nextBatch() : null;
    }

    /** The other session that held the scan at this task's last look, or null (tests). */
    String scanHeldBy() {
        return scanHeldBy;
    }

    /**
     * Before each batch: whether this task holds the scan of the database's messages. Held by another task (a second
     * connector with mentions.enabled=true on the database, or one that took over while this task's session was
     * lost), the pass ends and is put off for a scan interval; records already out settle and their messages are
     * marked as usual. The first task to look once the holder's session has ended takes over.
     */
    private boolean holdsScan() {
        String other;
        try {
            other = scan.otherScanner();
        } catch (SQLException e) {
            failPass("taking the scan of table messages", e);
            return false;
        }
        if (other == null) {
            if (scanHeldBy != null) {
                log.info("Mention recovery: {} no longer scans table messages; this task does now", scanHeldBy);
            }
            scanHeldBy = null;
            return true;
        }
        ScanTrigger.Kind kind = pass.kind();
        pass = null;
        long interval = config.scanInterval().toMillis();
        trigger.retryAfter(kind, interval);
        if (!other.equals(scanHeldBy)) {
            log.warn("Mention recovery: {} scans table messages of this database, so this task stays idle and takes"
                + " over once that session ends (it looks every {} ms). Two tasks scanning would publish every"
                + " recovered mention twice: set mentions.enabled=true on one connector per database", other, interval);
        }
        scanHeldBy = other;
        return false;
    }

    /** Reads, routes and publishes one batch of the current pass; null when it produced no record. */
    private List<SourceRecord> nextBatch() {
        long now = clock.millis();
        long liveSince = now - config.sessionLive().toMillis();
        // a periodic pass leaves out what is not older than the minimum age
        long newest = pass.kind().periodic() ? now - config.minAge().toMillis() - 1 : Long.MAX_VALUE;
        List<UnroutedMessage> batch;
        List<MentionBatchPlan.Parsed> parsed;
        Map<String, List<ChannelMember>> members;
        try {
            batch = store.readUnrouted(pass.floorSeq(), newest, liveSince, pass.limit());
            parsed = MentionBatchPlan.parse(batch);
            members = store.agentMembers(MentionBatchPlan.wanted(parsed, unmarkable), liveSince);
        } catch (SQLException e) {
            failPass("reading unrouted messages", e);
            return null;
        }
        MentionBatchPlan plan = MentionBatchPlan.plan(parsed, members, MAX_RECORDS_PER_BATCH, unmarkable);
        List<UnroutedMessage> planned = batch.subList(0, plan.planned());
        pass.batchRead(planned, batch.size());
        metrics.scanned(planned.size());
        plan.faults().forEach(this::reportFault);
        List<MentionBatchPlan.Routed> routedAll;
        try {
            routedAll = recordOwed(plan, now);
        } catch (SQLException e) {
            failPass("recording " + plan.owed().size() + " owed mention(s)", e);
            return null;
        }
        List<SourceRecord> records = new ArrayList<>();
        MentionOffsets offsets = namesMessages ? new MentionOffsets(transactions != null) : null;
        for (MentionBatchPlan.Routed routed : routedAll) {
            MentionAckTracker.PendingMessage pending = acks.expect(routed.message().named(), routed.mentions().size());
            List<RoutedMention> mentions = routed.mentions();
            for (int i = 0; i < mentions.size(); i++) {
                RoutedMention m = mentions.get(i);
                Map<String, ?> offset = offsets == null ? Map.of("seq", routed.message().seq())
                    : offsets.next(routed.message(), pending, i == mentions.size() - 1);
                records.add(RecoveredMentions.record(config.topic(), routed.message(), m, now, pending, offset));
                pass.recorded(m.arm());
                metrics.recovered(m.arm(), 1);
                log.trace("Mention recovery routes message {} to {} as {}", routed.message().id(),
                    m.member().accountId(), m.arm());
            }
        }
        unmarked.addAll(plan.nothingToRoute());
        markPending();
        if (records.isEmpty()) {
            return null;
        }
        lastList = records;
        if (transactions != null) {
            transactions.commitTransaction(records.get(records.size() - 1)); // one list, one transaction
        }
        return records;
    }

    private void reportFault(MentionBatchPlan.Fault f) {
        if (reportedFaults.first(f.message().named())) {
            log.error("Mention recovery left message {} (seq {}) unrouted: {}; it is read again every pass until"
                + " the row is fixed (logged again at DEBUG, counted in message-faults-total)", f.message().id(),
                f.message().seq(), f.reason());
        } else {
            log.debug("Mention recovery left message {} (seq {}) unrouted again: {}", f.message().id(),
                f.message().seq(), f.reason());
        }
        pass.faults(1);
        metrics.faults(1);
    }

    /**
     * Records the plan's owed rows in one statement; when that fails on a row's values, one message at a time, a
     * message whose own rows fail that way left unrouted as a fault (the contract's per-message fault: the scan goes
     * on). Returns the routed messages whose owed rows are recorded.
     *
     * @throws SQLException a failure not about the rows: the pass fails, and is retried
     */
    private List<MentionBatchPlan.Routed> recordOwed(MentionBatchPlan plan, long now) throws SQLException {
        try {
            store.recordOwed(plan.owed(), now);
            return plan.routed();
        } catch (SQLException e) {
            if (!MentionErrors.aboutTheRows(e)) {
                throw e;
            }
        }
        List<MentionBatchPlan.Routed> recorded = new ArrayList<>();
        for (MentionBatchPlan.Routed routed : plan.routed()) {
            List<MentionStore.OwedRow> rows = plan.owed().stream()
                .filter(o -> o.messageId().equals(routed.message().id())).toList();
            try {
                if (!rows.isEmpty()) {
                    store.recordOwed(rows, now);
                }
                recorded.add(routed);
            } catch (SQLException one) {
                if (!MentionErrors.aboutTheRows(one)) {
                    throw one;
                }
                // a fault like an unreadable message: read again every pass, so nothing is lost whatever refused it
                reportFault(new MentionBatchPlan.Fault(routed.message(),
                    MentionErrors.describe("recording its owed mention(s)", one)));
            }
        }
        return recorded;
    }

    /**
     * The last list, when Connect will acknowledge it only with a later transaction because a transform filtered it
     * whole (ListCommits): settled as undelivered, what its late nulls would say.
     */
    private void settleFilteredList(ListCommits.Settle settle) {
        boolean open = !acks.allSettled();
        if (open && (settle == ListCommits.Settle.IN_FLIGHT_NOW
            || settle == ListCommits.Settle.IN_FLIGHT_AT_LAST_POLL && lastList == unsettledAtLastPoll)) {
            lastList.forEach(r -> ((MentionRecord) r).settle(false));
        }
        unsettledAtLastPoll = open && listCommits.notesInFlight() ? lastList : null;
    }

    /**
     * Marks the messages the committed offset named, before any pass; false while that is not done (a failure
     * backs off with the marks' backoff).
     */
    private boolean markNamedAtStart() {
        long timer = timers.millis();
        if (timer < markRetryAtMs) {
            return false;
        }
        List<MentionOffsets.Named> left = new ArrayList<>(namedAtStart);
        try {
            int n = markAll(left);
            log.info("Mention recovery marked {} of the {} message(s) its committed offset named (the others were"
                + " marked already, are no longer those messages, or were set aside: see above)", n, namedAtStart.size());
            namedAtStart = List.of();
            markBackoff.reset();
            markRetryAtMs = 0;
            return true;
        } catch (SQLException e) {
            namedAtStart = List.copyOf(left);
            markFailed("marking the " + namedAtStart.size() + " message(s) the committed offset names", e,
                "no pass runs until they are marked", timer);
            return false;
        }
    }

    /**
     * Marks the pending messages routed, unless a failed mark's backoff has not passed yet. Every one
     * of them had all its records acknowledged, so a failure keeps them (each once) for the next attempt
     * instead of letting the next pass publish them again; it logs once per backoff step. While stopping,
     * a failure is left for the next start's pass.
     */
    private void markPending() {
        long timer = timers.millis();
        if (unmarked.isEmpty() || timer < markRetryAtMs) {
            return;
        }
        try {
            markAll(unmarked);
            markBackoff.reset();
            markRetryAtMs = 0;
        } catch (SQLException e) {
            if (!stopping) {
                markFailed("marking " + unmarked.size() + " delivered message(s) routed", e,
                    "no batch is read until they are marked", timer);
            }
        }
    }

    /**
     * Marks {@code named} routed, removing each once marked: all in one statement, or, when that fails on a row's
     * values, one message at a time, a message whose own mark fails that way set aside ({@link #unmarkable}) so that
     * it does not hold back the others.
     *
     * @return how many rows the marks changed (counted in the metrics and the pass)
     * @throws SQLException a failure not about the rows; the messages not marked yet are left in {@code named}
     */
    private int markAll(Collection<MentionOffsets.Named> named) throws SQLException {
        int n = 0;
        try {
            n = store.markNamed(named, clock.millis());
            named.clear();
            return n;
        } catch (SQLException e) {
            if (!MentionErrors.aboutTheRows(e)) {
                throw e;
            }
        } finally {
            countMarked(n);
        }
        int alone = 0;
        Map<MentionOffsets.Named, SQLException> refused = new LinkedHashMap<>();
        try {
            for (Iterator<MentionOffsets.Named> it = named.iterator(); it.hasNext();) {
                MentionOffsets.Named m = it.next();
                try {
                    alone += store.markNamed(List.of(m), clock.millis());
                    it.remove();
                } catch (SQLException one) {
                    if (!MentionErrors.aboutTheRows(one)) {
                        throw one;
                    }
                    refused.put(m, one);
                }
            }
        } finally {
            countMarked(alone);
        }
        if (!refused.isEmpty() && unmarkable.size() + refused.size() > REPORTED_FAULTS) {
            markSetAsideAgain(); // rows fixed since make room
        }
        if (!refused.isEmpty() && unmarkable.size() + refused.size() > REPORTED_FAULTS) {
            // more set aside than it remembers (a trigger that refuses every mark, say): held and retried as any
            // failed mark, rather than routed again at every pass
            throw refused.values().iterator().next();
        }
        refused.forEach(this::setAside);
        named.removeAll(refused.keySet());
        return alone;
    }

    /**
     * At the start of a pass (and when the set-aside messages fill up), the marks of up to
     * {@link #SET_ASIDE_RETRIES} messages set aside are tried again, one at a time, the oldest first: a row fixed
     * since is marked now, not routed again at the next start; one still refused goes last.
     */
    private void markSetAsideAgain() {
        int n = 0;
        List<MentionOffsets.Named> tries = unmarkable.keySet().stream().limit(SET_ASIDE_RETRIES).toList();
        for (MentionOffsets.Named m : tries) {
            try {
                n += store.markNamed(List.of(m), clock.millis());
                unmarkable.remove(m);
            } catch (SQLException e) {
                log.debug("Mention recovery still cannot mark message {} (seq {}) routed: {}", m.id(), m.seq(),
                    e.getMessage());
                if (!MentionErrors.aboutTheRows(e)) {
                    break; // the database, not the row: the next pass tries again
                }
                unmarkable.put(m, unmarkable.remove(m)); // last in line
            }
        }
        if (n > 0) {
            log.info("Mention recovery marked {} message(s) it had set aside; their rows accept the mark now", n);
            countMarked(n);
        }
    }

    private void countMarked(int n) {
        metrics.marked(n);
        if (pass != null) {
            pass.marked(n);
        }
    }

    private void setAside(MentionOffsets.Named m, SQLException e) {
        metrics.markFailed();
        metrics.faults(1);
        String reason = MentionErrors.markFailure("marking it routed", e);
        log.error("Mention recovery routed message {} (seq {}), its records, if any, delivered, but cannot mark it: {};"
            + " it goes on with the other messages, leaves this one unmarked and does not route it again while it runs"
            + " (a restart does, once); it tries the mark again at each pass: fix the row", m.id(), m.seq(), reason);
        reportedFaults.first(m);
        unmarkable.put(m, "it was routed, but " + reason);
    }

    /**
     * A failed mark, retriable or not, is tried again after the marks' backoff (2 s doubling to 1 min): a
     * missing grant or a read-only server is fixed outside the task, which then carries on by itself. One
     * that a retry cannot fix is an ERROR naming the fix, once per attempt.
     */
    private void markFailed(String what, SQLException e, String meanwhile, long timer) {
        long delay = markBackoff.nextDelayMs();
        markRetryAtMs = timer + delay;
        metrics.markFailed();
        String text = MentionErrors.markFailure(what, e) + "; " + meanwhile + "; retrying in " + delay
            + " ms (failure " + markBackoff.failures() + " in a row)";
        if (MentionErrors.retriable(e)) {
            log.warn("{}", text);
        } else {
            log.error("{}", text);
        }
    }

    private void finishPass() {
        long ms = pass.elapsedMs(System.nanoTime());
        metrics.passCompleted(ms);
        backoff.reset();
        if (pass.kind() == ScanTrigger.Kind.START || pass.scanned() > 0) {
            log.info("Mention recovery pass ({}) done in {} ms: {}", pass.kind(), ms, pass.summary());
        } else {
            log.debug("Mention recovery pass ({}) done in {} ms: {}", pass.kind(), ms, pass.summary());
        }
        pass = null;
    }

    private void failPass(String what, SQLException e) {
        ScanTrigger.Kind kind = pass.kind();
        int batches = pass.batches();
        pass = null;
        metrics.passFailed();
        if (stopping) {
            return;
        }
        long delay = backoff.nextDelayMs();
        trigger.retryAfter(kind, delay);
        String text = MentionErrors.describe(what, e) + "; pass (" + kind + ") ended after " + batches
            + " batch(es); retrying in " + delay + " ms";
        if (MentionErrors.retriable(e)) {
            log.warn("{}", text);
        } else {
            log.error("{}; the task keeps running", text);
        }
    }

    /**
     * Runs on the producer's I/O thread (or the task thread for a filtered record): O(1), no JDBC.
     * Null metadata means the record was not delivered; its message then stays unrouted (and a source offset
     * computed afterwards leaves it out).
     */
    @Override
    public void commit() {
        ListCommits commits = listCommits;
        if (commits != null) {
            commits.committed(); // on the poll thread only under exactly-once (ListCommits)
        }
    }

    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) {
        if (record instanceof MentionRecord r) {
            if (metadata == null && warnedUndelivered.compareAndSet(false, true)) {
                warnUndelivered(r.messageId());
            }
            r.settle(metadata != null);
        }
    }

    /** Once per task: a null metadata is either a tolerated send failure or a filtering transformation. */
    private void warnUndelivered(String messageId) {
        if (toleranceAll) {
            log.warn("Mention recovery: a record of message {} was not delivered (dropped under errors.tolerance=all); "
                + "the message stays unrouted and is scanned again next pass (logged once)", messageId);
        } else {
            log.warn("Mention recovery: a record of message {} was acknowledged without metadata, which under "
                + "errors.tolerance=none means a transformation filtered it; the message stays unrouted and its "
                + "records are produced again every pass. Do not filter {} records (logged once)",
                messageId, config.topic());
        }
    }

    @Override
    public void stop() {
        if (stopping) {
            return;
        }
        stopping = true;
        if (metricsRegistry != null) {
            metricsRegistry.close();
            metricsRegistry = null;
        }
        ScanTrigger t = trigger;
        if (t != null) {
            t.wake();
        }
        if (store != null) {
            // stop() runs on the task thread after the last poll(): acknowledgements that arrived since, and
            // marks still backing off, are tried now, or the next start would publish their messages again
            unmarked.addAll(acks.drainAcked());
            markRetryAtMs = 0;
            markPending();
        }
        AutoCloseable r = resources;
        resources = null;
        if (r != null) {
            try {
                r.close();
            } catch (Exception e) {
                log.warn("Mention recovery: closing the database resources failed: {}", e.toString());
            }
        }
        log.info("Mention recovery task stopped: {} messages scanned, {} records (STEER {}, OWED {}, WAKE {}), "
                + "{} marked, {} passes", metrics.messagesScanned(), metrics.recoveredTotal(),
            metrics.recovered(Arm.STEER), metrics.recovered(Arm.OWED), metrics.recovered(Arm.WAKE),
            metrics.messagesMarked(), metrics.passesCompleted());
    }

    /** This task's counters. */
    public MentionRecoveryMetrics metrics() {
        return metrics;
    }
}
