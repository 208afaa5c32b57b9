package io.outboxrelay.connector;

import io.outboxrelay.common.PostgresListener;
import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import io.outboxrelay.common.TaskStats;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Time;

/**
 * The metrics of one relay task, published over JMX by {@code TaskMetricsRegistry}: totals since the task
 * started, rates and latency maxima over the last {@value TaskStats#WINDOW_SECONDS} s ({@link TaskStats}),
 * and gauges.
 */
final class RelayMetrics {
    private final TaskStats stats;
    private final Sensor claimedRows;
    private final Sensor stampedRows;
    private final Sensor poisonedRows;
    private final Sensor failedRows;
    private final Sensor retriedRows;
    private final Sensor leaseExpiries;
    private final Sensor retainedRows;
    private final Sensor droppedPartitions;
    private final Sensor notifyWakeups;
    private final Sensor sweeps;
    private final Sensor claimMs;
    private final Sensor stampMs;
    private final Sensor subjectsReleased;
    /** The size the next fresh claim asks for, and the largest a claim asked for. */
    final AtomicLong claimSize = new AtomicLong();
    final AtomicLong maxClaimSize = new AtomicLong();
    final AtomicLong backlog = new AtomicLong(-1);
    final AtomicLong oldestAgeMs = new AtomicLong(-1);
    /** The seq of the last poisoned row that released its subject under outbox.ordering=strict; -1 until one. */
    final AtomicLong lastReleasedSeq = new AtomicLong(-1);
    final AtomicLong partitionsKept = new AtomicLong();

    RelayMetrics() {
        this(Time.SYSTEM);
    }

    RelayMetrics(Time time) {
        stats = new TaskStats(time);
        claimedRows = stats.totalAndRate("rows-claimed", "Rows this task claimed", "Rows claimed per second");
        stampedRows = stats.totalAndRate("rows-fanned", "Rows this task stamped as fanned out",
            "Rows stamped per second");
        poisonedRows = stats.totalAndRate("rows-poisoned", "Rows this task poisoned", "Rows poisoned per second");
        failedRows = stats.total("rows-failed", "Rows released for a retry after a record was not delivered");
        retriedRows = stats.total("rows-retried", "Rows claimed again, one at a time, after an earlier attempt: a"
            + " failed delivery, a task restart or a lost lease");
        leaseExpiries = stats.total("lease-expiries", "Rows claimed after another claimer's lease on them expired (it"
            + " died or stalled past outbox.lease.ms)");
        retainedRows = stats.total("rows-retained-deleted", "Fanned rows deleted by retention");
        droppedPartitions = stats.total("partitions-dropped", "Partitions of a partitioned outbox dropped by retention");
        claimMs = stats.durations("claim-latency", "Duration of the last claim statement", "Longest claim statement");
        stampMs = stats.durations("stamp-latency", "Duration of the last stamp transaction",
            "Longest stamp transaction");
        notifyWakeups = stats.count("notify-wakeups", "Wake-ups by LISTEN/NOTIFY: batches of notifications"
            + " and LISTEN sessions back in place, whether the task was busy or waiting");
        sweeps = stats.count("sweeps", "Periodic sweeps");
        subjectsReleased = stats.total("strict-subjects-released", "Poisoned rows that let their subject's later"
            + " rows go out under outbox.ordering=strict (each is logged at WARN with its seq and subject)");
    }

    void claimSize(int next, int asked) {
        claimSize.set(next);
        maxClaimSize.accumulateAndGet(asked, Math::max);
    }

    void claimed(int rows, long ms) {
        claimedRows.record(rows);
        claimMs.record(ms);
    }

    void stamped(int rows, long ms) {
        stampedRows.record(rows);
        stampMs.record(ms);
    }

    void poisoned(int rows) {
        poisonedRows.record(rows);
    }

    /** Under outbox.ordering=strict: poisoned row {@code seq} let its subject go on. */
    void subjectReleased(long seq) {
        subjectsReleased.record(1);
        lastReleasedSeq.set(seq);
    }

    void failed(int rows) {
        failedRows.record(rows);
    }

    void retried(int rows) {
        retriedRows.record(rows);
    }

    void leaseExpired(int rows) {
        if (rows > 0) { // called on every claim; almost always 0
            leaseExpiries.record(rows);
        }
    }

    void retained(int rows) {
        retainedRows.record(rows);
    }

    /** A retention round on a partitioned outbox: partitions it dropped, and those past retention it kept. */
    void partitionsRetained(int dropped, int kept) {
        if (dropped > 0) {
            droppedPartitions.record(dropped);
        }
        partitionsKept.set(kept);
    }

    void notifyWakeup() {
        notifyWakeups.record();
    }

    void sweep() {
        sweeps.record();
    }

    void backlog(long rows, long oldestMs) {
        backlog.set(rows);
        oldestAgeMs.set(oldestMs);
    }

    /** The current value of one published metric other than the gauges {@link #gauges} adds. */
    double value(String metric) {
        return stats.value(metric);
    }

    /**
     * The metrics as published over JMX; {@code inFlight} reads the task's records in flight, {@code hearsNothing}
     * whether its LISTEN session's last echo did not come back. The
     * table-wide gauges ({@code backlog-rows}, {@code oldest-unfanned-age-ms}) are published by one task
     * of the connector only ({@code tableWide}), so that summing a gauge over tasks, as dashboards do,
     * counts the table once.
     */
    Map<String, Metric> gauges(IntSupplier inFlight, boolean tableWide, BooleanSupplier hearsNothing) {
        Map<String, Metric> m = new LinkedHashMap<>();
        if (tableWide) {
            m.put("backlog-rows", new Metric("Rows waiting to be fanned out (not fanned, not poisoned), table-wide;"
                + " published by relay task 0 only; refreshed every 10 s; counted up to 100000, PostgreSQL's estimate"
                + " above; -1 until first read", backlog::get));
            m.put("partitions-kept", new Metric("Partitions of a partitioned outbox past outbox.retention.ms that"
                + " retention keeps, as they hold a pending or poisoned row; published by relay task 0 only",
                partitionsKept::get));
            m.put("oldest-unfanned-age-ms", new Metric("Age of the oldest row waiting to be fanned out, table-wide;"
                + " published by relay task 0 only; 0 when none", oldestAgeMs::get));
        }
        m.putAll(stats.published());
        m.put("rows-in-flight", new Metric("Claimed rows whose records are not all acknowledged yet",
            inFlight::getAsInt));
        m.put("claim-size", new Metric("Rows the next claim asks for: doubles after a full claim up to"
            + " outbox.batch.max.size, halves after a short one down to outbox.batch.size", claimSize::get));
        m.put("claim-size-max", new Metric("Most rows a claim of this task asked for", maxClaimSize::get));
        m.put("strict-last-released-seq", new Metric("Under outbox.ordering=strict, the seq of the last poisoned row"
            + " that released its subject; -1 until one", lastReleasedSeq::get));
        m.put("listen-hears-nothing", PostgresListener.hearsNothingMetric(hearsNothing, "outbox.listen.enabled=false"));
        return m;
    }

    String summary() {
        return "claimed " + total("rows-claimed-total") + ", stamped " + total("rows-fanned-total") + ", failed "
            + total("rows-failed-total") + ", poisoned " + total("rows-poisoned-total") + ", retried "
            + total("rows-retried-total") + ", lease expiries " + total("lease-expiries-total") + ", NOTIFY wake-ups "
            + total("notify-wakeups-total") + ", sweeps " + total("sweeps-total");
    }

    private long total(String metric) {
        return (long) stats.value(metric);
    }
}
