package io.outboxrelay.connector;

import io.outboxrelay.common.Backoff;
import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.DriverPropertyGuard;
import io.outboxrelay.common.PostgresErrorClassifier;
import io.outboxrelay.common.TaskMetricsRegistry;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay: claims outbox rows, hands Connect one record per matching subscription, and stamps a row
 * only after every one of its records was acknowledged. Each poll is one pass: keep the held rows'
 * leases, recover what a failure lost, write what settled (stamps, releases, poisonings), housekeeping,
 * then claim when a claim is due ({@link ClaimSchedule}, {@link WakeupCycle}). The rows it holds are
 * {@link HeldRows}; the table is an {@link OutboxStore}; a failing pass backs the task off.
 */
public class OutboxRelayTask extends SourceTask {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelayTask.class);
    /** Covers a database clock a little ahead of the worker's when a released row falls due. */
    private static final long RETRY_CLOCK_MARGIN_MS = 100;

    private final Clock clock;
    private final RelayBackend.Factory backends;
    private final WakeSignal wake = new WakeSignal();
    private final RelayMetrics metrics = new RelayMetrics();
    private OutboxSourceTaskConfig config;
    private RelayBackend backend;
    private OutboxStore store;
    private OutboxRecordFactory factory;
    private HeldRows held;
    private RejectionRules rules;
    private PoisonRecords poisonRecords;
    private Backoff passBackoff;
    private RelayMaintenance maintenance;
    private TaskMetricsRegistry metricsRegistry;
    private ClaimSchedule schedule;
    private ClaimSizer claimSizer;
    /** The wake-up flag's cycle (null: LISTEN off, or a table whose trigger notifies on every insert). */
    private volatile WakeupCycle wakeup;
    private boolean firstPassDone;
    private boolean leasesToRecover;
    private boolean reachedDatabase;
    private long startedAt;
    private long backoffUntil;
    private long nextLeaseExtensionAt;

    public OutboxRelayTask() {
        this(Clock.systemUTC(), RelayBackend::postgres);
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
        startedAt = now;
        // before the backend opens: its LISTEN thread may call notified() or listening() at once
        schedule = new ClaimSchedule(now, connector.sweepInterval().toMillis(), connector.pollInterval().toMillis(),
            connector.listenEnabled());
        String incarnation = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        backend = backends.open(config, incarnation, this::notified, this::listening);
        store = backend.store();
        factory = new OutboxRecordFactory(connector.subscriptions(), connector.table(), connector.recordShape());
        held = new HeldRows(connector.toleratesAllErrors(), wake::signal);
        passBackoff = new Backoff(connector.backoffInitial().toMillis(), connector.backoffMax().toMillis());
        rules = new RejectionRules(connector, passBackoff);
        poisonRecords = new PoisonRecords(connector.poisonTopic(), connector.table());
        boolean tableWide = config.relayTaskIndex() == 0;
        maintenance = new RelayMaintenance(store, connector.retentionMs(), connector.retentionIntervalMs(), tableWide,
            metrics);
        metricsRegistry = TaskMetricsRegistry.register(context, "relay", config.connectorName(), config.taskId(),
            metrics.gauges(held::inFlightCount, tableWide));
        claimSizer = new ClaimSizer(connector.batchSize(), connector.batchMaxSize());
        metrics.claimSize(claimSizer.next(), 0);
        nextLeaseExtensionAt = now + leaseExtensionPeriodMs();
        try {
            takeBackPreviousIncarnations();
        } catch (SQLException e) {
            // not fatal here: poll() retries the takeback and reports the classified error
            leasesToRecover = true;
            log.warn("Could not take back this task's earlier leases yet: {} (SQLState {})", e.getMessage(),
                e.getSQLState());
        }
        log.info("Outbox relay task {} started: table {}, {} subscriptions, batch {}-{}, subject share {}/{},"
            + " listen {}, lease owner {}", config.leaseOwner(), connector.table(), connector.subscriptions().size(),
            connector.batchSize(), claimSizer.max(), config.relayTaskIndex(), config.relayTaskCount(),
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

    /** LISTEN thread: LISTEN is (again) in place; rows committed before it may have notified no one. */
    private void listening() {
        schedule.request();
        wake.signal();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        held.dispatched(); // Connect is back for more: it sent everything returned before
        long now = clock.millis();
        if (now < backoffUntil) {
            extendLeasesWhileBackingOff(now);
            wake.await(Math.min(backoffUntil - now, ClaimSchedule.MAX_IDLE_WAIT_MS));
            return null;
        }
        try {
            List<SourceRecord> out = pass(now);
            passBackoff.reset();
            reachedDatabase = true;
            if (!out.isEmpty()) {
                return out;
            }
        } catch (SQLException e) {
            backOff(e);
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
        maybeExtendLeases(now);
        if (passBackoff.failures() > 0 || leasesToRecover) {
            recoverLostLeases();
        }
        settle();
        maintenance.run(now);
        List<SourceRecord> out = new ArrayList<>();
        ClaimSchedule.Due due = schedule.due(now, hasRoom());
        if (due != null) {
            claimInto(out, now, due);
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
        WakeupCycle.Flag flag = config.connector().listenEnabled() ? store.wakeupFlag() : null;
        if (flag != null) {
            wakeup = new WakeupCycle(flag, schedule::request);
        }
        firstPassDone = true;
    }

    private void backOff(SQLException e) {
        RuntimeException classified = PostgresErrorClassifier.classify(
            "Outbox relay on table " + config.connector().quotedTable(), e);
        if (!(classified instanceof RetriableException)) {
            throw classified;
        }
        long sinceStart = clock.millis() - startedAt;
        if (!reachedDatabase && sinceStart > config.connector().getLong(ConnectionConfigKeys.STARTUP_RETRY_MS)) {
            throw new ConnectException("Cannot reach PostgreSQL at "
                + DriverPropertyGuard.redact(config.connector().getString(ConnectionConfigKeys.URL))
                + " since the task started " + sinceStart / 1000 + " s ago: "
                + PostgresErrorClassifier.oneLine(e.getMessage()) + " (SQLState " + e.getSQLState()
                + "). Check connection.url, the network and that the server accepts connections, then restart"
                + " the task.", e);
        }
        long delay = passBackoff.nextDelayMs();
        backoffUntil = clock.millis() + delay;
        // the failed pass may have been the lease extension, or kept it from running: extend on the next pass
        // that works rather than a whole period later, when leases of rows in flight may have lapsed
        nextLeaseExtensionAt = 0;
        // the failed pass may have consumed the request that woke it (a NOTIFY, the listener's reconnect):
        // claim again when the backoff ends instead of waiting for the next one or the sweep
        schedule.request();
        log.warn("{}; backing off {} ms (failure {} in a row)", classified.getMessage(), delay,
            passBackoff.failures());
    }

    private boolean hasRoom() {
        return held.inFlightCount() < claimSizer.next() * config.connector().maxInflightBatches();
    }

    private void takeBackPreviousIncarnations() throws SQLException {
        int taken = store.takeBackPreviousIncarnations();
        if (taken > 0) {
            log.info("Took back {} rows this task had leased before it restarted; they are retried one by one",
                taken);
        }
    }

    /**
     * After a database error: the start-up takeback if it is still due, rows of a failed claim that never
     * reached Connect, and rows of a claim that committed while its result was lost with the connection.
     */
    private void recoverLostLeases() throws SQLException {
        if (leasesToRecover) {
            takeBackPreviousIncarnations();
            leasesToRecover = false;
        }
        List<OutboxStore.Release> lost = held.claimsLostToGiveBack();
        if (!lost.isEmpty()) {
            store.release(lost);
            held.claimsLostGivenBack();
        }
        // the attempt of a lost claim's rows is given back (a flapping database must not push good rows
        // towards poisoning), but once per row: rows whose claims keep losing their result keep counting
        List<OutboxStore.TakenBack> takenBack = store.takeBackUnknownLeases(held.seqs(), held.attemptReturnedOnce());
        for (OutboxStore.TakenBack row : takenBack) {
            held.attemptReturned(row.seq());
            String reason = rules.unreadPastLimit(row.seq(), row.attempts());
            if (reason != null) {
                held.poisonLater(row.seq(), reason);
            }
        }
        if (!takenBack.isEmpty()) {
            log.info("Recovered {} rows whose claim result was lost with the connection; they are claimed again",
                takenBack.size());
            schedule.checkSuspectsBy(clock.millis());
        }
        writePoisonings();
    }

    private void claimInto(List<SourceRecord> out, long now, ClaimSchedule.Due due) throws SQLException {
        if (due.sweep()) {
            metrics.sweep();
        }
        List<ClaimedRow> claimed = new ArrayList<>();
        List<ClaimedRow> accepted = new ArrayList<>();
        try {
            if (due.suspects()) {
                claimed.addAll(store.claim(false, 1));
                metrics.retried(claimed.size());
            }
            boolean suspectFound = !claimed.isEmpty();
            int batchSize = claimSizer.next();
            List<ClaimedRow> fresh = store.claim(true, batchSize);
            claimSizer.claimed(fresh.size());
            metrics.claimSize(claimSizer.next(), batchSize);
            schedule.claimed(now, due, fresh.size() == batchSize, suspectFound);
            claimed.addAll(fresh);
            if (wakeup != null) {
                wakeup.afterClaim(claimed.size(), fresh.size() == batchSize, now);
            }
            if (claimed.isEmpty()) {
                return;
            }
            metrics.claimed(claimed.size(), clock.millis() - now);
            metrics.leaseExpired((int) claimed.stream().filter(ClaimedRow::leaseExpired).count());
            for (ClaimedRow row : claimed) {
                String reason = rules.beforeProducing(row);
                if (reason != null) {
                    held.poisonLater(row.seq(), reason);
                } else {
                    accepted.add(row);
                }
            }
            // before any row is handed out: if the poison write fails, nothing of this claim is in flight
            writePoisonings();
        } catch (SQLException e) {
            // leased, attempt counted, none reached Connect: recoverLostLeases gives them back after the
            // backoff with that attempt returned (rows to poison stay held until their poisoning commits)
            held.claimLost(claimed);
            throw e;
        }
        List<PendingRow> deliverable = new ArrayList<>(accepted.size());
        for (ClaimedRow row : accepted) {
            PendingRow pending = factory.pending(row);
            held.handOut(pending);
            deliverable.add(pending);
        }
        factory.records(deliverable, out);
    }

    /**
     * Writes what settled: failed rows are poisoned at their last attempt and otherwise released with a
     * backoff, acknowledged rows are stamped. Whatever fails, the rows stay held and are written again.
     */
    private void settle() throws SQLException {
        for (PendingRow row : held.settle()) {
            String poison = rules.poisonAfterFailure(row);
            if (poison != null) {
                held.poisonLater(row.seq(), poison);
            } else {
                long delay = rules.retryDelayMs(row);
                held.releaseLater(row, delay);
                log.warn("Outbox row seq={} id={} was not delivered (attempt {} of {}): {}; retrying it alone in {} ms",
                    row.seq(), row.row().id(), row.row().attempts(), rules.maxAttempts(), row.failure(), delay);
            }
        }
        if (!held.hasWritesDue()) {
            return;
        }
        writePoisonings();
        List<OutboxStore.Release> releases = held.releasesToWrite();
        if (!releases.isEmpty()) {
            store.release(releases);
            held.releasesWritten();
            // the database's next_attempt_at was set during the statement: look no earlier than after it
            long releasedAt = clock.millis() + RETRY_CLOCK_MARGIN_MS;
            releases.forEach(r -> schedule.retryAt(releasedAt + r.delayMs()));
            metrics.failed(releases.size());
        }
        List<OutboxStore.Stamp> stamps = held.stampsToWrite();
        if (!stamps.isEmpty()) {
            long start = clock.millis();
            int stamped = store.stamp(stamps);
            held.stamped();
            metrics.stamped(stamped, clock.millis() - start);
        }
    }

    /** Poisons the rows waiting for it in one statement; logs each once and describes it on the poison topic. */
    private void writePoisonings() throws SQLException {
        List<OutboxStore.Poison> poisons = held.poisonsToWrite();
        if (poisons.isEmpty()) {
            return;
        }
        List<PoisonedRow> poisoned = store.poison(poisons);
        held.poisonsWritten();
        for (PoisonedRow p : poisoned) {
            log.error("Poisoned outbox row seq={} id={} type={} after {} attempts: {}. It is left out of every"
                + " claim; SELECT events_requeue({}) puts it back in line.", p.seq(), p.id(), p.type(),
                p.attempts(), p.reason(), p.seq());
        }
        metrics.poisoned(poisoned.size());
        poisonRecords.add(poisoned);
    }

    private void maybeExtendLeases(long now) throws SQLException {
        if (now < nextLeaseExtensionAt) {
            return;
        }
        nextLeaseExtensionAt = now + leaseExtensionPeriodMs();
        List<Long> seqs = held.seqs();
        if (!seqs.isEmpty()) {
            store.extend(seqs);
        }
    }

    /**
     * A backoff may outlast the lease (its cap is not tied to it): the rows this task holds keep their
     * leases through it, or another claimer could take rows this task will still stamp. A failure here only
     * logs; the backoff goes on.
     */
    private void extendLeasesWhileBackingOff(long now) {
        try {
            maybeExtendLeases(now);
        } catch (SQLException e) {
            nextLeaseExtensionAt = now + Math.min(1_000, leaseExtensionPeriodMs());
            log.debug("Lease extension during backoff failed: {} (SQLState {})", e.getMessage(), e.getSQLState());
        }
    }

    private long leaseExtensionPeriodMs() {
        return Math.max(500, config.connector().lease().toMillis() / 3);
    }

    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) {
        if (record instanceof OutboxRecord r) {
            held.acknowledged(r, metadata);
        }
    }

    /**
     * Writes what settled, then releases every row still in flight at once ({@link HeldRows#inFlightAtStop}
     * says which keep their attempt). Their next owner delivers them again: a consumer may see them twice.
     */
    @Override
    public void stop() {
        if (config == null) {
            return;
        }
        metricsRegistry.close();
        try {
            settle();
        } catch (SQLException e) {
            log.warn("Could not release leases on stop: writing what settled failed ({}); those rows' leases expire"
                + " after {} ms and they are claimed again", e.getMessage(), config.connector().lease().toMillis());
        }
        try {
            // rows of a claim that failed before they reached Connect: never attempted as far as Connect knows
            List<OutboxStore.Release> lost = held.claimsLostToGiveBack();
            if (!lost.isEmpty()) {
                store.release(lost);
                held.claimsLostGivenBack();
            }
            List<OutboxStore.Release> inFlight = held.inFlightAtStop();
            if (!inFlight.isEmpty()) {
                store.release(inFlight);
                log.info("Released the leases of {} rows still in flight at stop; they are claimed again at once ({}"
                    + " of them, from the last batch Connect may not have sent, keep their attempt)", inFlight.size(),
                    inFlight.stream().filter(r -> !r.returnAttempt()).count());
            }
            held.clearInFlight();
        } catch (SQLException e) {
            log.warn("Could not release leases on stop ({}); they expire after {} ms and are claimed again",
                e.getMessage(), config.connector().lease().toMillis());
        } finally {
            backend.close();
        }
        log.info("Outbox relay task {} stopped: {}", config.leaseOwner(), metrics.summary());
    }

    RelayMetrics metrics() {
        return metrics;
    }
}
