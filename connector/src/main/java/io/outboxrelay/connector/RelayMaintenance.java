package io.outboxrelay.connector;

import io.outboxrelay.common.PostgresErrorClassifier;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Periodic table-wide work beside the claim loop, on relay task 0's thread only (the other tasks skip
 * it): the backlog gauges (rows waiting, age of the oldest) and retention of fanned rows in small batches.
 */
final class RelayMaintenance {
    private static final Logger log = LoggerFactory.getLogger(RelayMaintenance.class);
    static final long BACKLOG_INTERVAL_MS = 10_000;
    /**
     * The first probe waits this long after the start: counting a large backlog takes time the first
     * claim should not wait for.
     */
    static final long FIRST_BACKLOG_DELAY_MS = 1_000;
    static final int RETENTION_BATCH = 1_000;
    private final OutboxStore store;
    private final boolean tableWideTask;
    private final long retentionMs;
    private final long retentionIntervalMs;
    private final RelayMetrics metrics;
    private long nextBacklogAt;
    private long nextRetentionAt;
    private boolean retentionDenied;

    RelayMaintenance(OutboxStore store, long retentionMs, long retentionIntervalMs, boolean tableWideTask,
                     RelayMetrics metrics, long now) {
        this.store = store;
        // one task of the connector does the table-wide work: the backlog gauges and retention
        this.tableWideTask = tableWideTask;
        this.retentionMs = tableWideTask ? retentionMs : 0;
        this.retentionIntervalMs = retentionIntervalMs;
        this.metrics = metrics;
        this.nextBacklogAt = now + FIRST_BACKLOG_DELAY_MS;
        this.nextRetentionAt = now + FIRST_BACKLOG_DELAY_MS;
    }

    /**
     * Probes the backlog and deletes a retention batch when due. Never throws: housekeeping that fails
     * (a statement timeout on a large table, a lock timeout) is logged and tried again at its next
     * interval, and must not stop the pass that claims and stamps rows.
     */
    void run(long nowMs) {
        if (tableWideTask && nowMs >= nextBacklogAt) {
            nextBacklogAt = nowMs + BACKLOG_INTERVAL_MS;
            try {
                probeBacklog();
            } catch (SQLException e) {
                log.warn("{}; the backlog gauges keep their last value until the next probe in {} ms",
                    PostgresErrorClassifier.classify("Reading the outbox backlog", e).getMessage(), BACKLOG_INTERVAL_MS);
            }
        }
        if (retentionMs > 0 && !retentionDenied && nowMs >= nextRetentionAt) {
            nextRetentionAt = nowMs + retentionIntervalMs;
            try {
                // a full batch means more is due: come back on the next poll, otherwise at the interval
                if (deleteRetainedBatch() == RETENTION_BATCH) {
                    nextRetentionAt = nowMs;
                }
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
            if ("42501".equals(e.getSQLState())) {
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
