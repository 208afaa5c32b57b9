package io.outboxrelay.connector;

import io.outboxrelay.common.Backoff;
import io.outboxrelay.common.ListCommits;
import io.outboxrelay.common.MonotonicClock;
import io.outboxrelay.common.TaskMetricsRegistry;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay: claims outbox rows, hands Connect one record per matching subscription, and stamps a row
 * only after every one of its records was acknowledged. Each poll is one pass, in this order: keep the
 * held rows' leases ({@link LeaseKeeper}), recover what a failure lost and write what failed
 * ({@link RowWrites}), housekeeping ({@link RelayMaintenance}), then, when {@link ClaimPacer} says a claim is
 * due, one statement that stamps what was acknowledged and claims ({@link ClaimStep}). The rows it holds are
 * {@link HeldRows}; the table is an {@link OutboxStore}; a failing pass backs the task off ({@link PassFailures}).
 */
public class OutboxRelayTask extends SourceTask {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelayTask.class);
    /** What {@link #idleWaitMs} returns when poll() must not wait (nor take a wake-up meant for the next wait). */
    private static final long NO_WAIT = -1;
    /** How long stop() lets a housekeeping round end before the pool it reads from closes. */
    private static final long MAINTENANCE_STOP_GRACE_MS = 2_000;

    private final Clock clock;
    private final RelayBackend.Factory backends;
    private final WakeSignal wake = new WakeSignal();
    private final RelayMetrics metrics = new RelayMetrics();
    private OutboxSourceTaskConfig config;
    private RelayBackend backend;
    private OutboxStore store;
    private HeldRows held;
    private ClaimPacer pacer;
    private ClaimSizer sizer;
    private LeaseKeeper leases;
    private RowWrites writes;
    private ClaimStep claims;
    private ReplayPass replays;
    private PoisonRecords poisonRecords;
    private RelayMaintenance maintenance;
    private ExecutorService maintenanceThread;
    private PassFailures failures;
    private TaskMetricsRegistry metricsRegistry;
    /** Non-null with connector-defined transaction boundaries: this task ends each list's transaction. */
    private TransactionContext transactions;
    /** What Connect will acknowledge only with a later transaction, being filtered whole (ListCommits). */
    private volatile ListCommits listCommits;
    /** The poll whose in-flight rows and replay chunk were noted (an exactly-once worker seen); -1: none. */
    private long notedPoll = -1;
    private Object replayAtLastPoll;
    private SlotReconciler reconciler;
    /** Whether an acknowledgement should wake the task thread (it waits for room, or is not active). */
    private volatile boolean wakeOnSettle = true;
    private boolean firstPassDone;
    private long backoffUntil;
    private long nextStampAloneAt;

    public OutboxRelayTask() {
        this(new MonotonicClock(), RelayBackend::postgres);
    }

    OutboxRelayTask(Clock clock, RelayBackend.Factory backends) {
        this.clock = clock;
        this.backends = backends;
    }

    @Override
    public String version() {
        return Version.get();
    }

    @Override
    public void start(Map<String, String> props) {
        config = new OutboxSourceTaskConfig(props);
        OutboxSourceConnectorConfig connector = config.connector();
        transactions = context == null ? null : context.transactionContext();
        listCommits = ListCommits.of(context, props);
        boolean namesRows = !connector.toleratesAllErrors(); // docs/exactly-once.md, 3.1
        if (transactions != null && !namesRows) {
            throw new ConnectException("transaction.boundary=connector needs errors.tolerance=none: under"
                + " errors.tolerance=all a record a converter or transform failure dropped is acknowledged like a"
                + " filtered one, so the relay cannot tell which rows are in Kafka (validation refuses this"
                + " configuration; docs/exactly-once.md, 3.10)");
        }
        // before the database is opened: a read that fails leaves nothing to close
        reconciler = namesRows && context != null && context.offsetStorageReader() != null
            ? SlotReconciler.read(context.offsetStorageReader(), connector.table(), config.relayTaskCount(),
                connector.subscriptions())
            : SlotReconciler.none();
        long now = clock.millis();
        // before the backend opens: its LISTEN thread may call notified() at once
        pacer = new ClaimPacer(now, connector.listenEnabled(), connector.lingerMs(), connector.lingerMaxMs(),
            connector.sweepInterval().toMillis(),
            connector.pollInterval().toMillis());
        String incarnation = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        backend = backends.open(config, incarnation, this::notified, this::notified);
        try {
            assemble(connector, namesRows, now);
        } catch (RuntimeException | Error e) {
            // Connect calls stop() after a failed start(); it finds nothing to do, so close what is open here (the
            // pool, the LISTEN session and its thread would stay open for the worker's lifetime). No step here is
            // known to fail; a bug or an Error (a class that fails to load, no memory for a thread) may
            try {
                stopMaintenance();
                backend.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            backend = null;
            throw e;
        }
    }

    /** The task's parts over the opened backend. */
    private void assemble(OutboxSourceConnectorConfig connector, boolean namesRows, long now) {
        store = backend.store();
        held = new HeldRows(connector.toleratesAllErrors(), this::rowSettled);
        Backoff backoff = new Backoff(connector.backoffInitial().toMillis(), connector.backoffMax().toMillis());
        failures = new PassFailures(connector, backoff, now);
        RejectionRules rules = new RejectionRules(connector, backoff);
        poisonRecords = new PoisonRecords(connector.poisonTopic(), connector.table());
        writes = new RowWrites(store, held, rules, poisonRecords, pacer, metrics, clock,
            connector.listenEnabled() ? connector.notifyChannel() : null,
            new StrictOrder(connector.strictOrdering(), metrics, () -> pacer.request(clock.millis())));
        sizer = new ClaimSizer(connector.batchSize(), connector.batchMaxSize());
        Map<String, Object> slot =
            PendingOffset.slot(connector.table(), config.relayTaskIndex(), config.relayTaskCount());
        RecordOffsets.Naming naming = namesRows
            ? RecordOffsets.Naming.pending(slot, store.owner(), config.relayTaskCount(),
                connector.subscriptions().stream().map(Subscription::name).collect(Collectors.joining(",")),
                transactions != null)
            : RecordOffsets.Naming.informational(connector.table());
        claims = new ClaimStep(store, held, writes,
            new OutboxRecordFactory(connector.subscriptions(), connector.table(), connector.recordShape(),
                Clock.systemUTC(), connector.timestampMaxAheadMs()), naming,
            rules, sizer, pacer, metrics, clock);
        leases = new LeaseKeeper(store, held, connector.lease().toMillis(), now);
        replays = ReplayPass.of(connector, rules, backend.replays(), wake::signal,
            namesRows && context != null ? context.offsetStorageReader() : null);
        boolean tableWide = config.relayTaskIndex() == 0;
        // only task 0 has table-wide rounds to run, beside its own thread
        maintenanceThread = tableWide ? RelayMaintenance.thread(config.leaseOwner()) : null;
        maintenance = new RelayMaintenance(store, connector.retentionMs(), connector.retentionIntervalMs(), tableWide,
            metrics, now, tableWide ? maintenanceThread : Runnable::run);
        metricsRegistry = TaskMetricsRegistry.register(context, "relay", config.connectorName(), config.taskId(),
            metrics.gauges(held::inFlightCount, tableWide, backend::listenHearsNothing));
        metrics.claimSize(sizer.next(), 0);
        log.info("Outbox relay task {} started: table {}, {} subscriptions, batch {}-{}, subject share {}/{},"
            + " listen {}, ordering {}, lease owner {}, source offsets {}", config.leaseOwner(), connector.table(),
            connector.subscriptions().size(), connector.batchSize(), sizer.max(), config.relayTaskIndex(),
            config.relayTaskCount(), connector.listenEnabled(), connector.strictOrdering() ? StrictOrder.STRICT
                : StrictOrder.BEST_EFFORT, store.owner(), !namesRows ? "informational"
                : transactions != null ? "naming the rows, one transaction per list" : "naming the rows");
    }

    /**
     * LISTEN thread: a NOTIFY arrived, or LISTEN is (again) in place and one sent meanwhile never reached this
     * task. Costs nothing while the task is active: its next claim is due anyway.
     */
    private void notified() {
        metrics.notifyWakeup();
        if (pacer.wake()) {
            wake.signal();
        }
    }

    /** Producer thread: every record of a row was settled. */
    private void rowSettled() {
        if (wakeOnSettle) {
            wake.signal();
        }
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        held.dispatched(); // Connect is back for more: it sent everything returned before
        settleFilteredLists(listCommits.atPoll());
        long now = clock.millis();
        long waitMs;
        if (now < backoffUntil) {
            leases.maybeExtendWhileBackingOff(now);
            waitMs = Math.min(backoffUntil - now, ClaimPacer.MAX_WAIT_MS);
        } else {
            List<SourceRecord> out = passOrBackOff(now);
            if (out == null) {
                return null; // the pass failed: the backoff starts with the next poll()
            }
            if (!out.isEmpty()) {
                if (transactions != null) {
                    // one list, one transaction; never a batch-level commit or an abort (docs/exactly-once.md, 3.2)
                    transactions.commitTransaction(out.get(out.size() - 1));
                }
                return out;
            }
            waitMs = idleWaitMs(clock.millis());
        }
        if (waitMs != NO_WAIT) {
            wake.await(waitMs);
        }
        return null;
    }

    /** One pass; when it fails, the backoff it calls for is set and null returned. */
    private List<SourceRecord> passOrBackOff(long now) {
        try {
            List<SourceRecord> out = pass(now);
            failures.passed();
            return out;
        } catch (SQLException e) {
            backoffUntil = clock.millis() + failures.backOffMs(e, clock.millis());
            leases.passFailed();
            // the failed pass may have used up the reason to claim (a NOTIFY, rows to stamp): claim when it ends
            pacer.request(backoffUntil);
            return null;
        }
    }

    /**
     * How long a poll() that returns nothing waits for a wake-up ({@link #NO_WAIT}: it returns at once): the
     * pacer's wait, which a settled row or a NOTIFY cuts short.
     */
    private long idleWaitMs(long now) {
        boolean room = hasRoom();
        // set before the look at settled rows below: one settled after that look signals the wait
        wakeOnSettle = !room || pacer.state() != ClaimPacer.State.ACTIVE;
        if (!room && held.hasSettledRows()) {
            return NO_WAIT; // rows settled during the pass: the next one makes room
        }
        return pacer.waitMs(now, room);
    }

    /**
     * Settles what Connect will acknowledge only with a later transaction, a transform having filtered every record
     * of its list: with connector-defined boundaries whatever is still in flight (any other list's commit delivered
     * its acknowledgements first); on an exactly-once worker otherwise, what was in flight at the last poll, once a
     * commit came since (ListCommits).
     */
    private void settleFilteredLists(ListCommits.Settle settle) {
        int settled = 0;
        if (settle == ListCommits.Settle.IN_FLIGHT_NOW) {
            settled = held.settleInFlightAsFiltered();
            replays.settleOpenAsFiltered();
        } else if (settle == ListCommits.Settle.IN_FLIGHT_AT_LAST_POLL && notedPoll >= 0) {
            settled = held.settleAsFilteredIfHandedOutBefore(notedPoll);
            replays.settleOpenAsFilteredIf(replayAtLastPoll);
        }
        if (settled > 0) {
            log.debug("Settled {} rows whose every record a transform filtered", settled);
        }
        boolean note = listCommits.notesInFlight();
        notedPoll = note ? held.poll() : -1; // what was handed out before this poll
        replayAtLastPoll = note ? replays.chunkInFlight() : null;
    }

    private List<SourceRecord> pass(long now) throws SQLException {
        // first: whatever fails later in this pass, the rows this task holds keep their leases
        leases.maybeExtend(now);
        if (!firstPassDone) {
            firstPass(now); // holds nothing yet: the leases above had none to keep
        }
        if (failures.failing()) {
            writes.recoverLostLeases();
        }
        writes.settle();
        maintenance.run(now);
        boolean room = hasRoom();
        if (held.has(HeldRow.State.ACKED) && pacer.state() != ClaimPacer.State.ACTIVE) {
            pacer.request(now + pacer.paceMs()); // an active task stamps with its next claim, at most outbox.linger.max.ms away
        }
        List<SourceRecord> out = new ArrayList<>();
        ClaimPacer.Claim claim = pacer.next(now, room);
        if (claim != null) {
            if (claim.sweep()) {
                metrics.sweep();
                if (!pacer.hasFlag()) {
                    lookForWakeupFlagAtSweep(now);
                }
            }
            claims.run(out, now);
        } else if (!room && held.has(HeldRow.State.ACKED) && now >= nextStampAloneAt) {
            // no claim while the window is full (a topic is down, say): the acknowledged rows are stamped alone
            nextStampAloneAt = now + pacer.paceMs();
            writes.stampAlone();
        }
        replays.run(out, now); // after the live claim, one chunk at most: live traffic keeps flowing
        // after the claim, which may fail: rows poisoned by settle() or the claim are described once this
        // pass has nothing left to throw
        out.addAll(poisonRecords.drain());
        return out;
    }

    /**
     * Before the first claim: no running connector may serve other subscriptions on the table (their
     * subscribers would lose the rows this task stamps), the rows committed source offsets name are stamped
     * ({@link SlotReconciler}), and the table's wake-up flag, if it has one.
     */
    private void firstPass(long now) throws SQLException {
        String conflict = store.tableShareConflict();
        if (conflict != null) {
            throw new ConnectException(conflict);
        }
        reconciler.reconcile(store);
        lookForWakeupFlag(now);
        firstPassDone = true;
    }

    /**
     * Before a sweep's claim, never after it (a failure there would drop the records claimed): a look that fails
     * leaves the task as it was, without the flag, until the next sweep.
     */
    private void lookForWakeupFlagAtSweep(long now) {
        try {
            lookForWakeupFlag(now);
        } catch (SQLException | RuntimeException e) {
            log.warn("Could not look for the wake-up flag of outbox table {} ({}); the task looks again at its next"
                + " sweep, and until then waits and looks as before",
                config.connector().quotedTable(), e.getMessage());
        }
    }

    /**
     * The table's wake-up flag, at the first pass and, while the table has none, at each sweep: migration V2
     * applied while the task runs gives the table a trigger that NOTIFYs only while a task is armed, and a task
     * that never looked again would find new rows only at its looks from then on.
     */
    private void lookForWakeupFlag(long now) throws SQLException {
        if (!config.connector().listenEnabled()) {
            return;
        }
        ClaimPacer.Flag flag;
        try {
            flag = store.wakeupFlag();
        } catch (WakeupFlag.NotPermitted e) {
            if (!pacer.polling()) { // once: the first pass, or the pacer's own refusal, warned already
                log.warn("{}. Until then this task claims every {} ms (outbox.poll.interval.ms) while it finds nothing,"
                    + " instead of waiting for a NOTIFY; it looks again at each sweep and uses the flag once it may",
                    e.getMessage(), config.connector().pollInterval().toMillis());
            }
            pacer.pollWithoutFlag(now, backend.listener());
            return;
        }
        if (flag != null && pacer.polling()) {
            log.info("The role may use the wake-up flag of outbox table {} now: the task arms it when its claims find"
                + " nothing, and waits for a NOTIFY instead of polling", config.connector().quotedTable());
        } else if (flag != null && firstPassDone) {
            log.info("Outbox table {} has a wake-up flag now (migration V2 applied while the task ran): the task arms"
                + " it when its claims find nothing", config.connector().quotedTable());
        }
        pacer.useFlag(flag, backend.listener());
    }

    private boolean hasRoom() {
        int batches = config.connector().maxInflightBatches();
        return held.hasRoom(sizer.batch() * batches, (long) config.connector().batchMaxBytes() * batches);
    }

    @Override
    public void commit() {
        ListCommits commits = listCommits;
        if (commits != null) {
            commits.committed(); // on the poll thread only under exactly-once (ListCommits)
        }
    }

    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) {
        if (record instanceof OutboxRecord r) {
            held.acknowledged(r, metadata);
        } else if (record instanceof ReplayRecord r) {
            replays.acknowledged(r, metadata);
        }
    }

    /**
     * Writes what settled, then releases every row still in flight at once (with connector-defined transaction
     * boundaries keeps their leases instead: their transaction may have committed); whatever fails, the leases
     * run out and the rows are claimed again.
     */
    @Override
    public void stop() {
        if (backend == null) {
            return; // never started, or start() failed and closed what it had opened
        }
        metricsRegistry.close();
        stopMaintenance();
        try {
            writes.settle();
        } catch (SQLException e) {
            log.warn("Could not release leases on stop: writing what failed went wrong ({}); those rows' leases"
                + " expire after {} ms and they are claimed again", e.getMessage(), config.connector().lease().toMillis());
        }
        try {
            writes.stampAlone();
        } catch (SQLException e) {
            log.warn("Could not stamp the acknowledged rows on stop ({}); their leases expire after {} ms and they are"
                + " delivered again", e.getMessage(), config.connector().lease().toMillis());
        }
        try {
            if (transactions != null) {
                writes.keepLeasesAtStop();
            } else {
                writes.releaseAtStop();
            }
        } catch (SQLException e) {
            log.warn("Could not release leases on stop ({}); they expire after {} ms and are claimed again",
                e.getMessage(), config.connector().lease().toMillis());
        } finally {
            replays.stop();
            backend.close();
        }
        log.info("Outbox relay task {} stopped: {}", config.leaseOwner(), metrics.summary());
    }

    /** A housekeeping round still running gets a moment to end before the pool it reads from closes. */
    private void stopMaintenance() {
        if (maintenanceThread == null) {
            return;
        }
        maintenanceThread.shutdownNow();
        try {
            if (!maintenanceThread.awaitTermination(MAINTENANCE_STOP_GRACE_MS, TimeUnit.MILLISECONDS)) {
                log.info("A housekeeping round (backlog probe or retention) was still running at stop; it is cut off");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    RelayMetrics metrics() {
        return metrics;
    }
}
