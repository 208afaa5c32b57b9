package io.outboxrelay.connector;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.Backoff;
import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.DriverPropertyGuard;
import io.outboxrelay.common.PostgresDataSources;
import io.outboxrelay.common.PostgresErrorClassifier;
import io.outboxrelay.common.PostgresListener;
import io.outboxrelay.common.TaskMetricsRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay: claims outbox rows, hands Connect one record per matching subscription, and stamps a
 * row only after every one of its records was acknowledged. Claims happen when a NOTIFY arrives, when
 * the last claim was full, on the periodic sweep, and (with LISTEN off) every poll interval; stamps
 * happen as soon as acknowledgements arrive. Failed rows are released with a backoff and retried
 * alone; rows that keep failing are poisoned by {@link RelayFailureHandler}.
 */
public class OutboxRelayTask extends SourceTask {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelayTask.class);
    /** Bounds {@link #attemptReturned}; lost claim results are rare, a few batches per outage. */
    private static final int MAX_ATTEMPTS_RETURNED_REMEMBERED = 100_000;

    private final Clock clock;
    private final WakeSignal wake = new WakeSignal();
    private OutboxSourceTaskConfig config;
    private HikariDataSource dataSource;
    private PostgresListener listener;
    private OutboxClaimer claimer;
    private OutboxRecordFactory factory;
    private FanOutAckTracker tracker;
    private RelayFailureHandler failures;
    private Backoff passBackoff;
    private final RelayMetrics metrics = new RelayMetrics();
    private RelayMaintenance maintenance;
    private TaskMetricsRegistry metricsRegistry;
    private long backoffUntil;
    private long startedAt;
    private boolean reachedDatabase;
    private boolean leasesToRecover;
    /** The wake-up flag's cycle (null: LISTEN off, or a table whose trigger notifies on every insert). */
    private WakeupCycle wakeup;
    private boolean wakeupChecked;
    private SharedTableGuard tableShare;
    /** Whether this task checked, before its first claim, that no connector serves other subscriptions on the table. */
    private boolean tableShareChecked;
    private ClaimSchedule schedule;
    private ClaimSizer claimSizer;
    private long nextLeaseExtensionAt;
    private final List<PendingRow> unstamped = new ArrayList<>();
    /** Rows a failed claim leased (and counted an attempt for) without handing them to Connect. */
    private final List<Long> neverHandedOut = new ArrayList<>();
    /** Rows whose lost claim this incarnation gave the attempt back for already (once per row). */
    private final Set<Long> attemptReturned = new HashSet<>();
    /**
     * Rows of the records the last poll() returned. Connect calls poll() again only once it has converted
     * and sent every record of the previous return, so rows returned earlier cannot be what failed the
     * task; these can (a converter or transform error in the batch stops the task before the next poll).
     */
    private final Set<Long> awaitingDispatch = new HashSet<>();

    public OutboxRelayTask() {
        this(Clock.systemUTC());
    }

    OutboxRelayTask(Clock clock) {
        this.clock = clock;
    }

    @Override
    public String version() {
        return Version.get();
    }

    @Override
    public void start(Map<String, String> props) {
        config = new OutboxSourceTaskConfig(props);
        String owner = config.leaseOwner();
        tableShare = new SharedTableGuard(config.connectorName(), config.connector().quotedTable(),
            config.connector().subscriptions());
        ConnectionSettings settings = ConnectionConfigKeys.settings(config.connector(),
            tableShare.applicationName(owner));
        dataSource = PostgresDataSources.pool(settings, 2, "outbox-relay-" + owner);
        String incarnation = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        claimer = new OutboxClaimer(dataSource, config.connector().quotedTable(), owner, incarnation,
            config.relayTaskCount(), config.relayTaskIndex(), config.connector().lease().toMillis(),
            config.connector().fannedChannel());
        factory = new OutboxRecordFactory(config.connector().subscriptions(), config.connector().table(),
            config.connector().recordShape());
        tracker = new FanOutAckTracker(config.connector().toleratesAllErrors(), wake::signal);
        passBackoff = new Backoff(config.connector().backoffInitial().toMillis(),
            config.connector().backoffMax().toMillis());
        failures = new RelayFailureHandler(claimer, config.connector(), passBackoff, metrics);
        maintenance = new RelayMaintenance(dataSource, config.connector().quotedTable(),
            config.connector().retentionMs(), config.connector().retentionIntervalMs(), config.relayTaskIndex() == 0,
            metrics);
        metricsRegistry = TaskMetricsRegistry.register(context, "relay", config.connectorName(), config.taskId(),
            metrics.gauges(tracker::inFlightCount, config.relayTaskIndex() == 0));
        long now = clock.millis();
        startedAt = now;
        claimSizer = new ClaimSizer(config.connector().batchSize(), config.connector().batchMaxSize());
        metrics.claimSize(claimSizer.next(), 0);
        schedule = new ClaimSchedule(now, config.connector().sweepInterval().toMillis(),
            config.connector().pollInterval().toMillis(), config.connector().listenEnabled());
        nextLeaseExtensionAt = now + leaseExtensionPeriodMs();
        try {
            takeBackPreviousIncarnations();
        } catch (SQLException e) {
            // not fatal here: poll() retries the takeback and reports the classified error
            leasesToRecover = true;
            log.warn("Could not take back this task's earlier leases yet: {} (SQLState {})", e.getMessage(),
                e.getSQLState());
        }
        if (config.connector().listenEnabled()) {
            listener = new PostgresListener(settings, config.connector().notifyChannel(), this::requestClaim,
                this::claimAfterListenStarts, "outbox-relay-listen-" + owner);
            listener.start();
        }
        log.info("Outbox relay task {} started: table {}, {} subscriptions, batch {}, subject share {}/{}, listen {},"
            + " lease owner {}", owner, config.connector().table(), config.connector().subscriptions().size(),
            config.connector().batchSize(), config.relayTaskIndex(), config.relayTaskCount(),
            config.connector().listenEnabled(), claimer.owner());
    }

    private void requestClaim() {
        schedule.request();
        metrics.notifyWakeup();
        wake.signal();
    }

    /** LISTEN is (again) in place: rows committed before it may have notified no one. */
    private void claimAfterListenStarts() {
        schedule.request();
        wake.signal();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        awaitingDispatch.clear(); // Connect is back for more: it sent everything returned before
        long now = clock.millis();
        if (now < backoffUntil) {
            extendLeasesWhileBackingOff(now);
            wake.await(Math.min(backoffUntil - now, ClaimSchedule.MAX_IDLE_WAIT_MS));
            return null;
        }
        try {
            if (!tableShareChecked) {
                refuseATableSharedWithOtherSubscriptions();
                tableShareChecked = true;
            }
            if (!wakeupChecked) {
                if (config.connector().listenEnabled()
                    && WakeupArming.available(dataSource, config.connector().table())) {
                    wakeup = new WakeupCycle(new WakeupArming(dataSource, config.connector().table()),
                        schedule::request);
                }
                wakeupChecked = true;
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
            // after the claim, which may fail: rows poisoned by settle() or the claim are described once
            // this pass has nothing left to throw
            out.addAll(failures.drainPoisonRecords(config.connector().poisonTopic()));
            passBackoff.reset();
            reachedDatabase = true;
            if (!out.isEmpty()) {
                return out;
            }
        } catch (SQLException e) {
            RuntimeException classified = PostgresErrorClassifier.classify(
                "Outbox relay on table " + config.connector().quotedTable(), e);
            if (!(classified instanceof RetriableException)) {
                throw classified;
            }
            long startupRetryMs = config.connector().getLong(ConnectionConfigKeys.STARTUP_RETRY_MS);
            if (!reachedDatabase && clock.millis() - startedAt > startupRetryMs) {
                throw new ConnectException("Cannot reach PostgreSQL at "
                    + DriverPropertyGuard.redact(config.connector().getString(
                        ConnectionConfigKeys.URL)) + " since the task started " + (clock.millis() - startedAt) / 1000
                    + " s ago: " + PostgresErrorClassifier.oneLine(e.getMessage()) + " (SQLState " + e.getSQLState() + "). Check connection.url,"
                    + " the network and that the server accepts connections, then restart the task.", e);
            }
            long delay = passBackoff.nextDelayMs();
            backoffUntil = clock.millis() + delay;
            // the failed pass may have been the lease extension, or kept it from running: extend on the next
            // pass that works rather than a whole period later, when leases of rows in flight may have lapsed
            nextLeaseExtensionAt = 0;
            // the failed pass may have consumed the request that woke it (a NOTIFY, the listener's
            // reconnect): claim again when the backoff ends instead of waiting for the next one or the sweep
            schedule.request();
            log.warn("{}; backing off {} ms (failure {} in a row)", classified.getMessage(), delay,
                passBackoff.failures());
            return null;
        }
        long idle = schedule.idleWaitMs(clock.millis(), hasRoom());
        wake.await(wakeup == null ? idle : wakeup.idleWaitMs(clock.millis(), idle));
        return null;
    }



    /** Fails the task, before it claims anything, when a running connector serves other subscriptions on the table. */
    private void refuseATableSharedWithOtherSubscriptions() throws SQLException {
        String conflict;
        try (Connection c = dataSource.getConnection()) {
            conflict = tableShare.conflict(c);
        }
        if (conflict != null) {
            throw new ConnectException(conflict);
        }
    }

    private boolean hasRoom() {
        return tracker.inFlightCount() < claimSizer.next() * config.connector().maxInflightBatches();
    }

    private void takeBackPreviousIncarnations() throws SQLException {
        int taken = claimer.releasePreviousIncarnations();
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
        if (!neverHandedOut.isEmpty()) {
            long[] seqs = neverHandedOut.stream().mapToLong(Long::longValue).toArray();
            int[] givebacks = new int[seqs.length];
            Arrays.fill(givebacks, 1);
            claimer.releaseNow(seqs, givebacks);
            neverHandedOut.clear();
        }
        // the attempt of a lost claim's rows is given back (a flapping database must not push good rows
        // towards poisoning), but once per row: rows whose claims keep losing their result keep counting
        if (attemptReturned.size() > MAX_ATTEMPTS_RETURNED_REMEMBERED) {
            attemptReturned.clear();
        }
        List<OutboxClaimer.Released> released = claimer.releaseUnknownLeases(heldSeqs(),
            attemptReturned.stream().mapToLong(Long::longValue).toArray());
        for (OutboxClaimer.Released r : released) {
            attemptReturned.add(r.seq());
            failures.poisonIfUnreadPastLimit(r.seq(), r.attempts());
        }
        if (!released.isEmpty()) {
            log.info("Recovered {} rows whose claim result was lost with the connection; they are claimed again",
                released.size());
            schedule.checkSuspectsBy(clock.millis());
        }
        failures.flushPoison();
    }

    private void claimInto(List<SourceRecord> out, long now, ClaimSchedule.Due due) throws SQLException {
        if (due.sweep()) {
            metrics.sweep();
        }
        List<ClaimedRow> claimed = new ArrayList<>();
        List<ClaimedRow> accepted = new ArrayList<>();
        try {
            if (due.suspects()) {
                claimed.addAll(claimer.claim(false, 1));
                metrics.retried(claimed.size());
                failures.retryTimesPassed(now);
            }
            boolean suspectFound = !claimed.isEmpty();
            int batchSize = claimSizer.next();
            List<ClaimedRow> fresh = claimer.claim(true, batchSize);
            claimSizer.claimed(fresh.size());
            metrics.claimSize(claimSizer.next(), batchSize);
            schedule.claimed(now, due, fresh.size() == batchSize, suspectFound, failures.nextRetryAt());
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
                String reason = failures.rejectBeforeProducing(row);
                if (reason != null) {
                    failures.poisonLater(row, reason);
                } else {
                    accepted.add(row);
                }
            }
            // before any row is tracked: if the poison write fails, nothing of this claim counts as in flight
            // (no row held, and its lease extended, for records Connect never got)
            failures.flushPoison();
        } catch (SQLException e) {
            // these rows are leased and their attempt counted, but none reached Connect: after the backoff
            // recoverLostLeases gives them back with that attempt returned (rows to poison stay held until
            // their poisoning commits)
            claimed.stream().filter(row -> !failures.poisonPending(row.seq()))
                .forEach(row -> neverHandedOut.add(row.seq()));
            throw e;
        }
        List<PendingRow> deliverable = new ArrayList<>(accepted.size());
        for (ClaimedRow row : accepted) {
            PendingRow pending = factory.pending(row);
            pending.markHandedOut();
            awaitingDispatch.add(pending.seq());
            tracker.track(pending);
            deliverable.add(pending);
        }
        factory.records(deliverable, out);
    }

    /** Stamps rows whose records were all acknowledged; releases or poisons rows that failed. */
    private void settle() throws SQLException {
        List<PendingRow> done = tracker.drainSettled();
        if (done.isEmpty() && unstamped.isEmpty() && !failures.hasPendingWrites()) {
            return;
        }
        // acknowledged rows stay in 'unstamped' until their stamp commits: whatever fails below (the
        // release of failed rows, the stamp itself), they are held and stamped after the backoff
        List<PendingRow> failed = new ArrayList<>();
        for (PendingRow row : done) {
            (row.failed() ? failed : unstamped).add(row);
        }
        if (!failed.isEmpty() || failures.hasPendingWrites()) {
            // on failure the handler keeps (and holds) the rows it could not poison or release, and writes
            // them again on the next pass
            failures.handleFailed(failed, clock.millis());
            schedule.checkSuspectsBy(failures.nextRetryAt());
        }
        if (unstamped.isEmpty()) {
            return;
        }
        long[] seqs = new long[unstamped.size()];
        String[] fanouts = new String[unstamped.size()];
        String[] ids = new String[unstamped.size()];
        for (int i = 0; i < seqs.length; i++) {
            seqs[i] = unstamped.get(i).seq();
            fanouts[i] = unstamped.get(i).fanoutJson();
            ids[i] = unstamped.get(i).row().id();
        }
        long start = clock.millis();
        int stamped = claimer.stamp(seqs, fanouts, ids);
        unstamped.clear();
        metrics.stamped(stamped, clock.millis() - start);
    }

    private void maybeExtendLeases(long now) throws SQLException {
        if (now < nextLeaseExtensionAt) {
            return;
        }
        nextLeaseExtensionAt = now + leaseExtensionPeriodMs();
        if (tracker.inFlightCount() == 0 && unstamped.isEmpty() && !failures.hasPendingWrites()) {
            return;
        }
        claimer.extendLeases(heldSeqs());
    }

    /**
     * A backoff may outlast the lease (its cap is not tied to it): the rows this task holds (records in
     * flight, acknowledged rows whose stamp failed) keep their leases through it, or another claimer could
     * take rows this task will still stamp. A failure here only logs; the backoff goes on.
     */
    private void extendLeasesWhileBackingOff(long now) {
        try {
            maybeExtendLeases(now);
        } catch (SQLException e) {
            nextLeaseExtensionAt = now + Math.min(1_000, leaseExtensionPeriodMs());
            log.debug("Lease extension during backoff failed: {} (SQLState {})", e.getMessage(), e.getSQLState());
        }
    }

    /**
     * Rows this task holds: in flight, acknowledged but not yet stamped (a stamp failed), and failed rows
     * whose poisoning or release has not committed yet.
     */
    private long[] heldSeqs() {
        return LongStream.concat(Stream.concat(tracker.inFlight().stream(), unstamped.stream())
            .mapToLong(PendingRow::seq), failures.heldSeqs()).toArray();
    }

    private long leaseExtensionPeriodMs() {
        return Math.max(500, config.connector().lease().toMillis() / 3);
    }

    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) {
        if (record instanceof OutboxRecord r) {
            tracker.onCommit(r, metadata);
        }
    }

    @Override
    public void stop() {
        if (config == null) {
            return;
        }
        if (listener != null) {
            listener.close();
        }
        metricsRegistry.close();
        try {
            settle();
            failures.releaseOnStop(tracker.inFlight(), awaitingDispatch);
            tracker.clear();
        } catch (SQLException e) {
            log.warn("Could not release leases on stop ({}); they expire after {} ms and are claimed again",
                e.getMessage(), config.connector().lease().toMillis());
        } finally {
            dataSource.close();
        }
        log.info("Outbox relay task {} stopped: {}", config.leaseOwner(), metrics.summary());
    }

    RelayMetrics metrics() {
        return metrics;
    }
}
