package io.outboxrelay.connector;

import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

/**
 * Counters and gauges of one relay task, published over JMX by {@code TaskMetricsRegistry}. Counters
 * are totals since the task started; rates are per second over the last {@link RateMeter#WINDOW_MS}.
 */
final class RelayMetrics {
    final AtomicLong claimed = new AtomicLong();
    final AtomicLong stamped = new AtomicLong();
    final AtomicLong poisoned = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong retried = new AtomicLong();
    final AtomicLong leaseExpiries = new AtomicLong();
    final AtomicLong retained = new AtomicLong();
    final AtomicLong notifyWakeups = new AtomicLong();
    final AtomicLong sweeps = new AtomicLong();
    final AtomicLong lastClaimMs = new AtomicLong();
    final AtomicLong maxClaimMs = new AtomicLong();
    /** The size the next fresh claim asks for, and the largest a claim asked for. */
    final AtomicLong claimSize = new AtomicLong();
    final AtomicLong maxClaimSize = new AtomicLong();
    final AtomicLong lastStampMs = new AtomicLong();
    final AtomicLong maxStampMs = new AtomicLong();
    final AtomicLong backlog = new AtomicLong(-1);
    final AtomicLong oldestAgeMs = new AtomicLong(-1);
    private final RateMeter claimRate = new RateMeter();
    private final RateMeter stampRate = new RateMeter();
    private final RateMeter poisonRate = new RateMeter();

    void claimSize(int next, int asked) {
        claimSize.set(next);
        maxClaimSize.accumulateAndGet(asked, Math::max);
    }

    void claimed(int rows, long ms) {
        claimed.addAndGet(rows);
        claimRate.add(rows);
        lastClaimMs.set(ms);
        maxClaimMs.accumulateAndGet(ms, Math::max);
    }

    void stamped(int rows, long ms) {
        stamped.addAndGet(rows);
        stampRate.add(rows);
        lastStampMs.set(ms);
        maxStampMs.accumulateAndGet(ms, Math::max);
    }

    void poisoned(int rows) {
        poisoned.addAndGet(rows);
        poisonRate.add(rows);
    }

    void failed(int rows) {
        failed.addAndGet(rows);
    }

    void retried(int rows) {
        retried.addAndGet(rows);
    }

    void leaseExpired(int rows) {
        leaseExpiries.addAndGet(rows);
    }

    void retained(int rows) {
        retained.addAndGet(rows);
    }

    void notifyWakeup() {
        notifyWakeups.incrementAndGet();
    }

    void sweep() {
        sweeps.incrementAndGet();
    }

    void backlog(long rows, long oldestMs) {
        backlog.set(rows);
        oldestAgeMs.set(oldestMs);
    }

    /**
     * The gauges as published over JMX; {@code inFlight} reads the task's records in flight. The
     * table-wide gauges ({@code backlog-rows}, {@code oldest-unfanned-age-ms}) are published by one task
     * of the connector only ({@code tableWide}), so that summing a gauge over tasks, as dashboards do,
     * counts the table once.
     */
    Map<String, Metric> gauges(IntSupplier inFlight, boolean tableWide) {
        Map<String, Metric> m = new LinkedHashMap<>();
        if (tableWide) {
            m.put("backlog-rows", new Metric("Rows waiting to be fanned out (not fanned, not poisoned), table-wide;"
                + " published by relay task 0 only; refreshed every 10 s; -1 until first read", backlog::get));
            m.put("oldest-unfanned-age-ms", new Metric("Age of the oldest row waiting to be fanned out, table-wide;"
                + " published by relay task 0 only; 0 when none", oldestAgeMs::get));
        }
        m.put("rows-claimed-total", new Metric("Rows this task claimed", claimed::get));
        m.put("rows-claimed-rate", new Metric("Rows claimed per second", claimRate::perSecond));
        m.put("rows-fanned-total", new Metric("Rows this task stamped as fanned out", stamped::get));
        m.put("rows-fanned-rate", new Metric("Rows stamped per second", stampRate::perSecond));
        m.put("rows-poisoned-total", new Metric("Rows this task poisoned", poisoned::get));
        m.put("rows-poisoned-rate", new Metric("Rows poisoned per second", poisonRate::perSecond));
        m.put("rows-failed-total", new Metric("Rows released for a retry after a record was not delivered",
            failed::get));
        m.put("rows-retried-total", new Metric("Rows claimed again, one at a time, after an earlier attempt: a failed"
            + " delivery, a task restart or a lost lease", retried::get));
        m.put("lease-expiries-total", new Metric("Rows claimed after another claimer's lease on them expired (it"
            + " died or stalled past outbox.lease.ms)", leaseExpiries::get));
        m.put("rows-retained-deleted-total", new Metric("Fanned rows deleted by retention", retained::get));
        m.put("rows-in-flight", new Metric("Claimed rows whose records are not all acknowledged yet",
            inFlight::getAsInt));
        m.put("claim-latency-last-ms", new Metric("Duration of the last claim statement", lastClaimMs::get));
        m.put("claim-latency-max-ms", new Metric("Longest claim statement", maxClaimMs::get));
        m.put("claim-size", new Metric("Rows the next claim asks for: doubles after a full claim up to"
            + " outbox.batch.max.size, halves after a short one down to outbox.batch.size", claimSize::get));
        m.put("claim-size-max", new Metric("Most rows a claim of this task asked for", maxClaimSize::get));
        m.put("stamp-latency-last-ms", new Metric("Duration of the last stamp transaction", lastStampMs::get));
        m.put("stamp-latency-max-ms", new Metric("Longest stamp transaction", maxStampMs::get));
        m.put("notify-wakeups-total", new Metric("Claims woken by LISTEN/NOTIFY", notifyWakeups::get));
        m.put("sweeps-total", new Metric("Periodic sweeps", sweeps::get));
        return m;
    }

    String summary() {
        return "claimed " + claimed + ", stamped " + stamped + ", failed " + failed + ", poisoned " + poisoned
            + ", retried " + retried + ", lease expiries " + leaseExpiries + ", NOTIFY wake-ups " + notifyWakeups + ", sweeps " + sweeps;
    }

    /** Events per second over a sliding window of one-second buckets. */
    static final class RateMeter {
        static final long WINDOW_MS = 30_000;
        private final long[] buckets = new long[(int) (WINDOW_MS / 1000)];
        private long currentSecond = -1;

        synchronized void add(long n) {
            roll(System.currentTimeMillis() / 1000);
            buckets[(int) (currentSecond % buckets.length)] += n;
        }

        synchronized double perSecond() {
            roll(System.currentTimeMillis() / 1000);
            long sum = 0;
            for (long b : buckets) {
                sum += b;
            }
            return sum / (double) buckets.length;
        }

        private void roll(long second) {
            if (currentSecond < 0) {
                currentSecond = second;
                return;
            }
            long steps = Math.min(second - currentSecond, buckets.length);
            for (long s = 1; s <= steps; s++) {
                buckets[(int) ((currentSecond + s) % buckets.length)] = 0;
            }
            currentSecond = Math.max(currentSecond, second);
        }
    }
}
