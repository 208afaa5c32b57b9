package io.outboxrelay.connector;

import io.outboxrelay.common.PostgresErrorClassifier;
import io.outboxrelay.common.SqlStates;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
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
 * backlog gauges (rows waiting, age of the oldest) and retention of fanned rows in small batches; on a
 * table partitioned by day (V5), the partitions ahead of time and retention by whole partitions. It runs
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
    /** How often the partitions ahead are looked after: hourly, for partitions made a week ahead. */
    static final long PARTITIONS_INTERVAL_MS = 3_600_000;
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
    /** Read by the rounds alone, one at a time: the table's partition upkeep, null for a plain table. */
    private PartitionUpkeep partitions;
    private boolean partitionsKnown;
    private long nextPartitionsAt;

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
                round(backlog, retention, nowMs);
            } finally {
                idle.set(true);
            }
        });
    }

    private void round(boolean backlog, boolean retention, long nowMs) {
        if (backlog) {
            try {
                probeBacklog();
            } catch (SQLException e) {
                log.warn("{}; the backlog gauges keep their last value until the next probe in {} ms",
                    PostgresErrorClassifier.classify("Reading the outbox backlog", e).getMessage(), BACKLOG_INTERVAL_MS);
            }
            if (nowMs >= nextPartitionsAt) {
                makePartitionsAhead(nowMs);
            }
        }
        if (retention) {
            try {
                // a full batch means more is due: come back at the next pass, otherwise at the interval
                retentionMore = partitions() != null ? dropRetainedPartitions() : deleteRetainedBatch() == RETENTION_BATCH;
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

    /** The table's partition upkeep, looked up at the first round that needs it; null for a plain table. */
    private PartitionUpkeep partitions() throws SQLException {
        if (!partitionsKnown) {
            partitions = store.partitions();
            partitionsKnown = true;
            if (partitions != null) {
                log.info("The outbox is partitioned by day: housekeeping makes partitions {} days ahead{}",
                    PartitionUpkeep.DAYS_AHEAD, retentionMs > 0 ? " and retention drops whole partitions" : "");
            }
        }
        return partitions;
    }

    private void makePartitionsAhead(long nowMs) {
        try {
            PartitionUpkeep upkeep = partitions();
            nextPartitionsAt = nowMs + PARTITIONS_INTERVAL_MS;
            int made = upkeep == null ? 0 : upkeep.makeAhead();
            if (made > 0) {
                log.info("Made {} partitions of the outbox ahead of time", made);
            }
        } catch (SQLException e) {
            log.warn("{}; tried again at the next backlog probe, and rows of a day without its partition land in"
                + " the default partition meanwhile (docs/partitioned-outbox.md)",
                PostgresErrorClassifier.classify("Making the outbox's partitions ahead", e).getMessage());
        }
    }

    /**
     * Retention by partition: never more due at once (a partition is a day). A partition kept for a row still
     * to fan out or poisoned is reported at every round until that row is fanned out or requeued.
     */
    private boolean dropRetainedPartitions() throws SQLException {
        int dropped = 0;
        List<String> kept = new ArrayList<>();
        try {
            for (PartitionUpkeep.Retired r : partitions.dropRetained(retentionMs)) {
                if (r.dropped()) {
                    dropped++;
                } else {
                    kept.add(r.partition() + " (" + r.pending() + " pending, " + r.poisoned() + " poisoned)");
                }
            }
        } catch (SQLException e) {
            denied(e, "GRANT EXECUTE ON FUNCTION the outbox table's <table>_drop_partitions(timestamptz) TO"
                + " outbox_relay");
            return false;
        }
        metrics.partitionsRetained(dropped, kept.size());
        if (dropped > 0) {
            log.info("Retention dropped {} partitions of the outbox older than {} ms", dropped, retentionMs);
        }
        if (!kept.isEmpty()) {
            log.warn("Retention keeps {} partitions older than outbox.retention.ms={}, as they hold rows not fanned out:"
                + " {}. A pending row is still to be relayed; a poisoned one waits for <table>_requeue(seq) or to be"
                + " resolved by hand (docs/partitioned-outbox.md)", kept.size(), retentionMs, String.join(", ", kept));
        }
        return false;
    }

    /** Turns retention off on a permission error (42501), naming {@code grant}; rethrows any other. */
    private void denied(SQLException e, String grant) throws SQLException {
        if (!SqlStates.is(e, SqlStates.INSUFFICIENT_PRIVILEGE)) {
            throw e;
        }
        retentionDenied = true;
        log.error("Retention is on (outbox.retention.ms={}) but the role may not remove rows: {}. Retention is off"
            + " until the task restarts; the relay itself is unaffected.", retentionMs, grant);
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
            denied(e, "GRANT DELETE ON the outbox table TO outbox_relay");
            return 0;
        }
    }
}
