package io.outboxrelay.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Steady latency: with the contender running and idle, {@link PacedWriter} commits events at a fixed
 * rate for a fixed time, and each event's latency is the consumer's first receive time minus the
 * writer's commit time (both {@link System#nanoTime()} of this JVM). Rates run one after the other on
 * the same connector.
 */
final class LatencyPhase {
    private static final long PRIMING_BASE = 1_900_000_000L;

    private LatencyPhase() {
    }

    static List<Results.Latency> run(Bench b, Contender c, List<Integer> rates, int seconds) throws Exception {
        List<Results.Latency> out = new ArrayList<>();
        BenchDatabases.Db db = b.postgres.createDatabase("latency_" + c.kind());
        try {
            startStreaming(b, c, db);
            long idBase = 0;
            for (int rate : rates) {
                b.awaitQuiet(String.format("latency of %s at %,d/s", c.label(), rate));
                PacedWriter writer = new PacedWriter(db, rate, seconds, idBase);
                out.add(measure(b, c, writer, 0, Duration.ofSeconds(60)));
                idBase += writer.count();
            }
        } finally {
            try {
                c.close();
            } finally {
                b.postgres.dropDatabase(db);
            }
        }
        return out;
    }

    /**
     * Creates the topics (with broker append times: commit -> append vs append -> receive splits the latency),
     * prepares and starts the contender on {@code db}, waits until it runs and relays a few priming events.
     */
    static void startStreaming(Bench b, Contender c, BenchDatabases.Db db) throws Exception {
        b.kafka.createTopicsIfMissing(c.topics(), java.util.Map.of("message.timestamp.type", "LogAppendTime"));
        c.prepare(db);
        c.start();
        c.awaitRunning();
        prime(c, b, db, 100, true);
    }

    /**
     * A few events end to end, one per transaction, so the measured ones meet a warm, streaming pipeline; with
     * {@code spaced} each is followed by a CHECKPOINT (tens of ms apart), else they are committed back to back.
     */
    static void prime(Contender c, Bench b, BenchDatabases.Db db, int events, boolean spaced) throws Exception {
        try (RecordWatcher w = new RecordWatcher(b.kafka, c.topics(), PRIMING_BASE, events, false, c.readCommitted())) {
            if (spaced) {
                for (int i = 0; i < events; i++) {
                    db.insertBacklog(PRIMING_BASE + i, 1, 1);
                }
            } else {
                db.insertBacklog(PRIMING_BASE, events, 1);
            }
            if (!w.awaitComplete(Duration.ofSeconds(120))) {
                throw new IllegalStateException(c.label() + " did not deliver its priming events within 120 s");
            }
        }
    }

    /**
     * Runs {@code writer}'s schedule against the running contender and waits up to {@code deliveryWait} after
     * it for every committed event to be visible; latencies are over the events from {@code warmupEvents} on.
     */
    static Results.Latency measure(Bench b, Contender c, PacedWriter writer, int warmupEvents, Duration deliveryWait)
        throws Exception {
        try (RecordWatcher w = new RecordWatcher(b.kafka, c.topics(), writer.firstId(), writer.count(), true,
            c.readCommitted())) {
            CpuMeter.Sample cpu0 = b.cpu.sample();
            writer.run();
            w.awaitDistinct(writer.committed() * c.topics().size(), deliveryWait);
            CpuMeter.Sample used = b.cpu.sample().minus(cpu0);
            long[] commit = writer.commitNanos();
            long[] recv = w.receiveNanos();
            long[] commitWall = writer.commitWallMs();
            long[] appended = w.timestampMs();
            long[] lat = new long[commit.length];
            long[] toBroker = new long[commit.length];
            int n = 0;
            long sent = 0;
            for (int i = warmupEvents; i < commit.length; i++) {
                if (commit[i] != 0) {
                    sent++;
                    if (recv[i] != 0) {
                        toBroker[n] = Math.max(0, appended[i] - commitWall[i]) * 1_000_000L;
                        lat[n++] = Math.max(0, recv[i] - commit[i]);
                    }
                }
            }
            lat = Arrays.copyOf(lat, n);
            Arrays.sort(lat);
            toBroker = Arrays.copyOf(toBroker, n);
            Arrays.sort(toBroker);
            double mean = Arrays.stream(lat).average().orElse(Double.NaN) / 1e6;
            int rate = writer.rate();
            int warmupSeconds = warmupEvents / rate;
            int seconds = writer.count() / rate - warmupSeconds;
            Results.Latency r = new Results.Latency(c.label(), c.kind(), c.variant(), writer.connections(), rate,
                warmupSeconds, seconds, sent, n, Results.round1(writer.achievedRate(warmupEvents)), writer.late(),
                ms(lat, 0.50), ms(lat, 0.95), ms(lat, 0.99), ms(lat, 0.999),
                n == 0 ? Double.NaN : Results.round2(lat[n - 1] / 1e6), Results.round2(mean),
                ms(toBroker, 0.50), ms(toBroker, 0.99), cdf(lat),
                Results.Cpu.of(used, writer.committed()));
            b.log("  %-34s %,6d/s for %d s: p50 %.1f ms, p95 %.1f, p99 %.1f, max %.1f (writers %,.0f/s; %,d of %,d"
                    + " received; commit->broker p50 %.0f, p99 %.0f ms; other processes %.2f cores)", c.label(), rate,
                seconds, r.p50Ms(), r.p95Ms(), r.p99Ms(), r.maxMs(), r.achievedRate(), n, sent, r.toBrokerP50Ms(),
                r.toBrokerP99Ms(), r.cpu().othersCores());
            return r;
        }
    }

    /** Nearest-rank percentile in milliseconds. */
    static double ms(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int idx = (int) Math.ceil(q * sorted.length) - 1;
        return Results.round2(sorted[Math.max(0, Math.min(sorted.length - 1, idx))] / 1e6);
    }

    /** Points {latency ms, fraction received by then} for the CDF chart, denser in the tail. */
    static List<double[]> cdf(long[] sorted) {
        List<double[]> pts = new ArrayList<>();
        if (sorted.length == 0) {
            return pts;
        }
        List<Double> qs = new ArrayList<>();
        for (int i = 0; i <= 100; i++) {
            qs.add(i / 100.0);
        }
        for (double q : new double[] {0.995, 0.998, 0.999, 0.9995, 0.9999}) {
            qs.add(q);
        }
        qs.sort(Double::compare);
        for (double q : qs) {
            int idx = Math.max(0, Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1));
            pts.add(new double[] {Results.round2(sorted[idx] / 1e6), q});
        }
        return pts;
    }
}
