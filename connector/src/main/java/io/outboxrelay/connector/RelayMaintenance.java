package io.outboxrelay.connector;

import io.outboxrelay.common.PostgresErrorClassifier;
import io.outboxrelay.common.SqlStates;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Periodic table-wide work beside the claim loop, for relay task 0 only (the other tasks skip it): the
 * backlog gauges (rows waiting, age of the oldest) and retention of fanned rows in small batches. It runs
 * on an executor of its own ({@link #thread}), one round at a time: a round that takes longer than its
 * interval on a huge table (a count, a retention scan) delays the next round, never a claim or a stamp.
 */
final class RelayMaintenance {
    private static final Logger log = LoggerFactory.getLogger(RelayMaintenance.class);
    /** Between two probes of the backlog gauges. */
    static final long BACKLOG_INTERVAL_MS = 10_000;
    /**
     * The first probe waits this long after the start: counting a large backlog takes time the first
     * claim should not wait for.
     */
    static final long FIRST_BACKLOG_DELAY_MS = 1_000;
    /** The first retention batch waits this long after the start, for the same reason. */
    static final long FIRST_RETENTION_DELAY_MS = 1_000;
    /** The most fanned rows one retention statement deletes. */
    static final int RETENTION_BATCH = 1_000;
    private final OutboxStore store;
    private final boolean tableWideTask;
    private final long retentionMs;
    private final long retentionIntervalMs;
    private final RelayMetrics metrics;
    private final Executor executor;
    /** No round is running: the task thread may start one. */
    private final AtomicBoolean idle = new AtomicBoolean(true);
    private long nextBacklogAt;
    private long nextRetentionAt;
    /** Written by a round: retention found a full batch (more is due at once), or may not delete. */
    private volatile boolean retentionMore;
    private volatile boolean retentionDenied;

    /** @param executor where the rounds run: {@link #thread} for a task, the caller's thread in tests */
    RelayMaintenance(OutboxStore store, long retentionMs, long retentionIntervalMs, boolean tableWideTask,
                     RelayMetrics metrics, long now, Executor executor) {
        this.store = store;
        // one task of the connector does the table-wide work: the backlog gauges and retention
        this.tableWideTask = tableWideTask;
        this.retentionMs = tableWideTask ? retentionMs : 0;
        this.retentionIntervalMs = retentionIntervalMs;
        this.metrics = metrics;
        this.executor = executor;
        this.nextBacklogAt = now + FIRST_BACKLOG_DELAY_MS;
        this.nextRetentionAt = now + FIRST_RETENTION_DELAY_MS;
    }

    /**
     * One thread, a daemon named after the task, with the task's MDC (its connector and task in every log
     * line); {@code shutdownNow} it when the task stops.
     */
    static ExecutorService thread(String owner) {
        Map<String, String> mdc = MDC.getCopyOfContextMap();
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(() -> {
                if (mdc != null) {
                    MDC.setContextMap(mdc);
                }
                r.run();
            }, "outbox-relay-maintenance-" + owner);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts a round when the backlog probe or a retention batch is due and no round runs: task thread,
     * O(1). A round never throws: housekeeping that fails (a statement timeout on a large table, a lock
     * timeout) is logged and tried again at its next interval.
     */
    void run(long nowMs) {
        boolean backlog = tableWideTask && nowMs >= nextBacklogAt;
        boolean retention = retentionMs > 0 && !retentionDenied && (nowMs >= nextRetentionAt || retentionMore);
        if (!(backlog || retention) || !idle.compareAndSet(true, false)) {
            return;
        }
        if (backlog) {
            nextBacklogAt = nowMs + BACKLOG_INTERVAL_MS;
        }
        if (retention) {
            nextRetentionAt = nowMs + retentionIntervalMs;
            retentionMore = false;
        }
        executor.execute(() -> {
            try {
                round(backlog, retention);
            } finally {
                idle.set(true);
            }
        });
    }

    private void round(boolean backlog, boolean retention) {
        if (backlog) {
            try {
                probeBacklog();
            } catch (SQLException e) {
                log.warn("{}; the backlog gauges keep their last value until the next probe in {} ms",
                    PostgresErrorClassifier.classify("Reading the outbox backlog", e).getMessage(), BACKLOG_INTERVAL_MS);
            }
        }
        if (retention) {
            try {
                // a full batch means more is due: come back at the next pass, otherwise at the interval
                retentionMore = deleteRetainedBatch() == RETENTION_BATCH;
            } catch (SQLException e) {
                log.warn("{}; retention tries again in {} ms, the relay is unaffected",
                    PostgresErrorClassifier.classify("Deleting fanned rows past outbox.retention.ms", e).getMessage(),
                    retentionIntervalMs);
            }
        }
    }

    private void probeBacklog() throws SQLException {
        OutboxStore.Backlog backlog = store.backlog();
        metrics.backlog(backlog.rows(), backlog.oldestAgeMs());
    }

    private int deleteRetainedBatch() throws SQLException {
        try {
            int deleted = store.deleteRetained(retentionMs, RETENTION_BATCH);
            if (deleted > 0) {
                metrics.retained(deleted);
                log.debug("Retention deleted {} fanned rows older than {} ms", deleted, retentionMs);
            }
            return deleted;
        } catch (SQLException e) {
            if (SqlStates.is(e, SqlStates.INSUFFICIENT_PRIVILEGE)) {
                retentionDenied = true;
                log.error("Retention is on (outbox.retention.ms={}) but the role may not DELETE from the outbox:"
                    + " GRANT DELETE ON the outbox table TO outbox_relay. Retention is off until the task restarts;"
                    + " the relay itself is unaffected.", retentionMs);
                return 0;
            }
            throw e;
        }
    }
}
