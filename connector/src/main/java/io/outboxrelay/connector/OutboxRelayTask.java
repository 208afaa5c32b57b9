package io.outboxrelay.connector;

import io.outboxrelay.common.Backoff;
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
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay: claims outbox rows, hands Connect one record per matching subscription, and stamps a row
 * only after every one of its records was acknowledged. Each poll is one pass, in this order: keep the
 * held rows' leases ({@link LeaseKeeper}), recover what a failure lost and write what settled
 * ({@link RowWrites}), housekeeping ({@link RelayMaintenance}), then claim when a claim is due
 * ({@link ClaimSchedule}, {@link WakeupCycle}, {@link ClaimStep}). The rows it holds are {@link HeldRows};
 * the table is an {@link OutboxStore}; a failing pass backs the task off ({@link PassFailures}).
 */
public class OutboxRelayTask extends SourceTask {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelayTask.class);

    private final Clock clock;
    private final RelayBackend.Factory backends;
    private final WakeSignal wake = new WakeSignal();
    private final RelayMetrics metrics = new RelayMetrics();
    private OutboxSourceTaskConfig config;
    private RelayBackend backend;
    private OutboxStore store;
    private HeldRows held;
    private ClaimSchedule schedule;
    private ClaimSizer sizer;
    private LeaseKeeper leases;
    private RowWrites writes;
    private ClaimStep claims;
    private PoisonRecords poisonRecords;
    private RelayMaintenance maintenance;
    private ExecutorService maintenanceThread;
    private PassFailures failures;
    private TaskMetricsRegistry metricsRegistry;
    /** The wake-up flag's cycle (null: LISTEN off, or a table whose trigger notifies on every insert). */
    private volatile WakeupCycle wakeup;
    private boolean firstPassDone;
    private long backoffUntil;

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
        long now = clock.millis();
        // before the backend opens: its LISTEN thread may call notified() or listening() at once
        schedule = new ClaimSchedule(now, connector.sweepInterval().toMillis(), connector.pollInterval().toMillis(),
            connector.listenEnabled());
        String incarnation = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        backend = backends.open(config, incarnation, this::notified, this::listening);
        store = backend.store();
        held = new HeldRows(connector.toleratesAllErrors(), wake::signal);
        Backoff backoff = new Backoff(connector.backoffInitial().toMillis(), connector.backoffMax().toMillis());
        failures = new PassFailures(connector, backoff, now);
        RejectionRules rules = new RejectionRules(connector, backoff);
        poisonRecords = new PoisonRecords(connector.poisonTopic(), connector.table());
        writes = new RowWrites(store, held, rules, poisonRecords, schedule, metrics, clock,
            connector.listenEnabled() ? connector.notifyChannel() : null);
        sizer = new ClaimSizer(connector.batchSize(), connector.batchMaxSize());
        claims = new ClaimStep(store, held, writes,
            new OutboxRecordFactory(connector.subscriptions(), connector.table(), connector.recordShape(),
                Clock.systemUTC(), connector.timestampMaxAheadMs()), rules,
            sizer, schedule, metrics, clock);
        leases = new LeaseKeeper(store, held, connector.lease().toMillis(), now);
        boolean tableWide = config.relayTaskIndex() == 0;
        // only task 0 has table-wide rounds to run, beside its own thread
        maintenanceThread = tableWide ? RelayMaintenance.thread(config.leaseOwner()) : null;
        maintenance = new RelayMaintenance(store, connector.retentionMs(), connector.retentionIntervalMs(), tableWide,
            metrics, now, tableWide ? maintenanceThread : Runnable::run);
        metricsRegistry = TaskMetricsRegistry.register(context, "relay", config.connectorName(), config.taskId(),
            metrics.gauges(held::inFlightCount, tableWide));
        metrics.claimSize(sizer.next(), 0);
        log.info("Outbox relay task {} started: table {}, {} subscriptions, batch {}-{}, subject share {}/{},"
            + " listen {}, lease owner {}", config.leaseOwner(), connector.table(), connector.subscriptions().size(),
            connector.batchSize(), sizer.max(), config.relayTaskIndex(), config.relayTaskCount(),
            connector.listenEnabled(), store.owner());
    }

    /** LISTEN thread: a NOTIFY arrived. */
    private void notified() {
        WakeupCycle cycle = wakeup;
        if (cycle != null) {
            cycle.notified();
        }
        schedule.request();
        metrics.notifyWakeup();
        wake.signal();
    }

    /**
     * LISTEN thread: LISTEN is (again) in place. A NOTIFY sent meanwhile reached the other tasks, which
     * armed the flag again, so writers after it may have sent none: arm and settle as on a NOTIFY.
     */
    private void listening() {
        WakeupCycle cycle = wakeup;
        if (cycle != null) {
            cycle.notified();
        }
        schedule.request();
        wake.signal();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        held.dispatched(); // Connect is back for more: it sent everything returned before
        long now = clock.millis();
        if (now < backoffUntil) {
            leases.maybeExtendWhileBackingOff(now);
            wake.await(Math.min(backoffUntil - now, ClaimSchedule.MAX_IDLE_WAIT_MS));
            return null;
        }
        try {
            List<SourceRecord> out = pass(now);
            failures.passed();
            if (!out.isEmpty()) {
                return out;
            }
        } catch (SQLException e) {
            backoffUntil = clock.millis() + failures.backOffMs(e, clock.millis());
            leases.passFailed();
            // the failed pass may have consumed the request that woke it (a NOTIFY, the listener's reconnect):
            // claim again when the backoff ends instead of waiting for the next one or the sweep
            schedule.request();
            return null;
        }
        long idle = schedule.idleWaitMs(clock.millis(), hasRoom());
        wake.await(wakeup == null ? idle : wakeup.idleWaitMs(clock.millis(), idle));
        return null;
    }

    private List<SourceRecord> pass(long now) throws SQLException {
        if (!firstPassDone) {
            firstPass();
        }
        if (wakeup != null) {
            wakeup.beforeClaim(now);
        }
        // first: whatever fails later in this pass, the rows this task holds keep their leases
        leases.maybeExtend(now);
        if (failures.failing()) {
            writes.recoverLostLeases();
        }
        writes.settle();
        maintenance.run(now);
        List<SourceRecord> out = new ArrayList<>();
        ClaimSchedule.Due due = schedule.due(now, hasRoom());
        if (due != null) {
            if (due.sweep()) {
                metrics.sweep();
            }
            claims.run(out, now, wakeup);
        }
        // after the claim, which may fail: rows poisoned by settle() or the claim are described once this
        // pass has nothing left to throw
        out.addAll(poisonRecords.drain());
        return out;
    }

    /**
     * Before the first claim: no running connector may serve other subscriptions on the table (their
     * subscribers would lose the rows this task stamps), and the table's wake-up flag, if it has one.
     */
    private void firstPass() throws SQLException {
        String conflict = store.tableShareConflict();
        if (conflict != null) {
            throw new ConnectException(conflict);
        }
        WakeupCycle.Flag flag = config.connector().listenEnabled() ? store.wakeupFlag(config.connector().notifyChannel()) : null;
        if (flag != null) {
            wakeup = new WakeupCycle(flag, schedule::request, config.connector().lingerMs());
        }
        firstPassDone = true;
    }

    private boolean hasRoom() {
        int batches = config.connector().maxInflightBatches();
        return held.hasRoom(sizer.batch() * batches, (long) config.connector().batchMaxBytes() * batches);
    }

    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) {
        if (record instanceof OutboxRecord r) {
            held.acknowledged(r, metadata);
        }
    }

    /**
     * Writes what settled, then releases every row still in flight at once; whatever fails, the leases
     * run out and the rows are claimed again.
     */
    @Override
    public void stop() {
        if (config == null) {
            return;
        }
        metricsRegistry.close();
        stopMaintenance();
        try {
            writes.settle();
        } catch (SQLException e) {
            log.warn("Could not release leases on stop: writing what settled failed ({}); those rows' leases expire"
                + " after {} ms and they are claimed again", e.getMessage(), config.connector().lease().toMillis());
        }
        try {
            writes.releaseAtStop();
        } catch (SQLException e) {
            log.warn("Could not release leases on stop ({}); they expire after {} ms and are claimed again",
                e.getMessage(), config.connector().lease().toMillis());
        } finally {
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
            if (!maintenanceThread.awaitTermination(2, TimeUnit.SECONDS)) {
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
