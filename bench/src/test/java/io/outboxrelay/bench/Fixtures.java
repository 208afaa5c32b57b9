package io.outboxrelay.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Measured results built by hand, for the tests of the pure logic over them. */
final class Fixtures {
    static final Results.Cpu NO_CPU = new Results.Cpu(0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0);

    private Fixtures() {
    }

    /** A step's latency: {@code sent} events committed at {@code achieved}/s, {@code received} of them seen. */
    static Results.Latency latency(String kind, String variant, int rate, double achieved, long sent, long received,
                                   double p99Ms) {
        return new Results.Latency(kind + " " + variant, kind, variant, 16, rate, 3, 15, sent, received, achieved, 0,
            p99Ms / 3, p99Ms / 2, p99Ms, p99Ms * 1.5, p99Ms * 2, p99Ms / 3, p99Ms / 4, p99Ms,
            List.of(new double[] {p99Ms / 4, 0.1}, new double[] {p99Ms / 3, 0.5}, new double[] {p99Ms, 0.99},
                new double[] {p99Ms * 2, 1.0}), NO_CPU);
    }

    /** A step that holds (writers at 99 %, all delivered) or fails on p99 alone, as {@code p99Ms} says. */
    static Results.SustainableStep step(int rate, double p99Ms) {
        return SustainableRate.step(rate, latency("relay", "", rate, rate * 0.99, rate * 15L, rate * 15L, p99Ms));
    }

    /** A contender stepped through {@code p99s} (one p99 per step from 500/s on, in the standard rates). */
    static Results.Sustainable sustainable(String kind, String variant, double... p99s) {
        List<Results.SustainableStep> steps = new ArrayList<>();
        for (int i = 0; i < p99s.length; i++) {
            steps.add(step(BenchOptions.SUSTAINABLE_RATES.get(i), p99s[i]));
        }
        return SustainableRate.summarize(kind + (variant.isEmpty() ? "" : " " + variant), kind, variant, 2, 16, steps,
            BenchOptions.SUSTAINABLE_RATES.size());
    }

    static Results.Drain drain(String kind, String variant, int tasks, long events, double eventsPerSec,
                               double firstRecordMs, double liveHeapMb) {
        return new Results.Drain("drain", kind + " " + tasks, kind, variant, tasks, 1, Map.of(), events, events,
            events / eventsPerSec, eventsPerSec, eventsPerSec, firstRecordMs, eventsPerSec, 0, 0, 300, NO_CPU,
            new Results.Heap(100, 80, liveHeapMb, 1, 10, 8));
    }

    static Results.WriterRun writerRun(String key, String connector, int connections, int round, double perSec) {
        return new Results.WriterRun(key, key, connector, connections, round, Math.round(perSec * 10), 10, perSec, -1,
            NO_CPU);
    }

    /**
     * A steady step over a 10 s window at {@code rate}/s, with these CPU milliseconds of PostgreSQL, the worker and
     * the broker, {@code missing} events not delivered and {@code statements} calls by kind.
     */
    static Results.SteadyStep steadyStep(String kind, String variant, String workload, int rate, long postgresMs,
                                         long workerMs, long brokerMs, long missing, Map<String, Long> statements) {
        return steadyStep(kind, variant, workload, rate, 1, postgresMs, workerMs, brokerMs, missing, statements,
            Map.of());
    }

    /** The same in round {@code round}, with PostgreSQL's milliseconds by session kind. */
    static Results.SteadyStep steadyStep(String kind, String variant, String workload, int rate, int round,
                                         long postgresMs, long workerMs, long brokerMs, long missing,
                                         Map<String, Long> statements, Map<String, Long> postgresByKindMs) {
        long commits = rate * 10L;
        CpuMeter.Sample window = new CpuMeter.Sample(workerMs, postgresMs, brokerMs, 0, workerMs + postgresMs
            + brokerMs, 10_000);
        return new Results.SteadyStep(workload, rate, round, 1, kind + variant, (kind + " " + variant).trim(), kind,
            variant, kind.equals("none") ? 0 : 2, commits, commits, rate, kind.equals("none") ? -1 : commits - missing,
            missing, Results.Cpu.of(window, commits), new StatementCounts(statements, List.of()), postgresByKindMs);
    }

    /** A contender's cost at {@code rate}: these us per event over a no-connector step of 400 us per commit. */
    static Results.SteadyCost steadyCost(String kind, String variant, String workload, int rate, double postgresUs,
                                         double workerUs, double brokerUs, long missing) {
        Results.SteadyStep none = steadyStep("none", "", workload, rate, 4 * rate, 10 * rate, 5 * rate, 0, Map.of());
        Results.SteadyStep step = steadyStep(kind, variant, workload, rate, Math.round((400 + postgresUs) * rate / 100),
            Math.round((1000 + workerUs) * rate / 100), Math.round((500 + brokerUs) * rate / 100), missing, Map.of());
        return SteadyAccounting.cost(step, none);
    }
}
