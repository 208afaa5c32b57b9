package io.outboxrelay.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Everything one benchmark run measured, written as {@code results/<timestamp>.json}. */
final class Results {
    /**
     * CPU time per party over a measurement, and per event: the worker JVM, PostgreSQL, the broker's JVM and the
     * benchmark's own JVM (the writers and the consumer).
     */
    record Cpu(long workerMs, long postgresMs, long brokerMs, long benchMs, long othersMs, long wallMs,
               double workerUsPerEvent, double postgresUsPerEvent, double brokerUsPerEvent, double benchUsPerEvent,
               double othersCores, long jitMs) {
        static Cpu of(CpuMeter.Sample s, long events) {
            double e = Math.max(1, events);
            return new Cpu(s.workerMs(), s.postgresMs(), s.brokerMs(), s.benchMs(), s.othersMs(), s.wallMs(),
                round1(s.workerMs() * 1000 / e), round1(s.postgresMs() * 1000 / e), round1(s.brokerMs() * 1000 / e),
                round1(s.benchMs() * 1000 / e), round2(s.othersMs() / (double) Math.max(1, s.wallMs())), s.jitMs());
        }

        /** The worker's and the broker's JIT compiling per second of the window (included in their times). */
        double jitMsPerSecond() {
            return jitMs * 1000.0 / Math.max(1, wallMs);
        }
    }

    /** Worker heap over a measurement (see {@link HeapStats}). */
    record Heap(double peakUsedMb, double maxAfterGcMb, double liveMidDrainMb, int collections, double allocatedMb,
                double allocatedKbPerEvent) {
        static Heap of(HeapStats h, long events) {
            return new Heap(round1(h.peakUsedMb()), round1(h.maxAfterGcMb()), round1(h.maxLiveMb()), h.collections(),
                round1(h.allocatedMb()), round2(h.allocatedMb() * 1024 / Math.max(1, events)));
        }
    }

    /** A backlog drained from "connector started" to "last record visible to a consumer". */
    record Drain(String phase, String label, String kind, String variant, int tasks, int subscriptions, Map<String, String> overrides,
                 long events, long records, double seconds, double eventsPerSec, double recordsPerSec,
                 double firstRecordAfterMs, double steadyEventsPerSec, double stampedAllAfterMs, long duplicates, double avgRecordBytes,
                 Cpu cpu, Heap heap) {
    }

    /**
     * A fixed-rate run: receive time minus commit time for every event committed after the first
     * {@code warmupSeconds} of the schedule ({@code seconds} long after it), by {@code connections} writers.
     */
    record Latency(String label, String kind, String variant, int connections, int rate, int warmupSeconds,
                   int seconds, long sent, long received, double achievedRate,
                   long writerLate, double p50Ms, double p95Ms, double p99Ms, double p999Ms, double maxMs,
                   double meanMs, double toBrokerP50Ms, double toBrokerP99Ms, List<double[]> cdf, Cpu cpu) {
    }

    /**
     * One step of the sustainable-rate phase: {@code latency} at {@code targetRate}, and whether the contender
     * held it ({@code verdict} says why not).
     */
    record SustainableStep(int targetRate, Latency latency, boolean holds, String verdict) {
    }

    /**
     * A contender's steps, its sustainable rate (the highest step held, 0 when none), whether it held every
     * step it ran and never failed one ({@code heldEveryStep}: its rate is at least the top step), and whether
     * p99 stayed within the bound at every step up to its sustainable rate ({@code tailHeld}).
     */
    record Sustainable(String label, String kind, String variant, int tasks, int connections, List<SustainableStep> steps,
                       int sustainableRate, boolean heldEveryStep, boolean tailHeld) {
    }

    /**
     * One step of the steady phase: {@code label} (no connector, or a contender streaming) while the writers commit
     * {@code workload}'s transactions at {@code rate}/s. CPU and statements are over the measured window
     * ({@code windowCommits} commits, per event over those); {@code missing} is over every event the step
     * committed, warm-up included. {@code order}: the step's place in the phase.
     */
    record SteadyStep(String workload, int rate, int round, int order, String key, String label, String kind,
                      String variant, int tasks, long committed, long windowCommits, double achievedRate, long received,
                      long missing, Cpu cpu, StatementCounts statements, Map<String, Long> postgresByKindMs) {
    }

    /**
     * A contender's cost at a rate ({@link SteadyAccounting}): CPU per relayed event of PostgreSQL, the worker and the
     * broker, each its step minus the no-connector step of the same workload and rate; the writers' own PostgreSQL
     * CPU per commit (that step's); PostgreSQL's share of it; the connector's statements per event by kind; the
     * PostgreSQL CPU per event by session kind ({@link PostgresSessions}), each over the no-connector step's. Over
     * {@code rounds} rounds the steps of each round are pooled (CPU and time summed), and each round's own total and
     * PostgreSQL share are kept to show the spread.
     */
    record SteadyCost(String workload, int rate, String key, String label, String kind, String variant, int tasks,
                      double achievedRate, long missing, double postgresUsPerEvent, double workerUsPerEvent,
                      double brokerUsPerEvent, double totalUsPerEvent, double writersPostgresUsPerCommit,
                      double postgresShareOfWritersPct, double statementsPerEvent,
                      Map<String, Double> statementsPerEventByKind, double othersCores, int rounds,
                      Map<String, Double> postgresUsPerEventByKind, List<Double> totalUsPerEventByRound,
                      List<Double> postgresShareOfWritersPctByRound) {
    }

    /** A rate without the other half of the pipeline. */
    record Ceiling(String name, String unit, long count, double seconds, double perSec, String settings) {
    }

    /** Top costs of one profiled drain: the worker JVM's JFR summary and the database's statements. */
    record Profile(String label, long events, double seconds, double eventsPerSec, Cpu cpu, Map<String, Object> jfr,
                   List<Map<String, Object>> sqlStatements, String jfrFile) {
    }

    /** The mention-recovery companion task catching up on unrouted messages. */
    record Mentions(int messages, double seconds, double messagesPerSec, long records, long owedRows,
                    double firstRecordAfterMs) {
    }

    /** One writer-ceiling measurement: full-speed single-event commits of {@code connections} writers. */
    record WriterRun(String key, String label, String connector, int connections, int round, long commits,
                     double seconds, double commitsPerSec, long unrelayedAtEnd, Cpu cpu) {
    }

    /**
     * A setup's writer ceiling over its rounds: mean commits/s and the range, and the ratio to the
     * primary-key-only table and to Debezium, each taken round by round (mean and range).
     */
    record WriterCase(String key, String label, String connector, int connections, int rounds, double commitsPerSec,
                      double minPerSec, double maxPerSec, Ratio xPkOnly, Ratio xDebezium,
                      double postgresUsPerCommit, double workerUsPerCommit, double maxOtherCores) {
    }

    /** A ratio measured in each round: the mean and the range. NaN when the reference was not measured. */
    record Ratio(double mean, double min, double max) {
    }

    /** CPU while a connector runs and nobody writes; per task: minus the no-connector floor, divided by tasks. */
    record Idle(String key, String label, int tasks, double seconds, double workerMsPerSec, double postgresMsPerSec,
                double workerMsPerSecPerTask, double postgresMsPerSecPerTask, double othersCores) {
    }

    /**
     * One unmeasured priming run ({@link Bench#primeUntilJitQuiet}): which phase and contender, its number, what the
     * worker's and the broker's JIT compilers used in it, and whether the priming stopped there because the budget ran
     * out rather than on quiet compilers.
     */
    record Priming(String phase, String contender, int run, double jitMsPerSecond, boolean budgetSpent) {
    }

    /** A target from the issue, with what was measured against it. */
    record Target(String name, String goal, String measured, Boolean met) {
    }

    final Map<String, Object> environment = new LinkedHashMap<>();
    final Map<String, Object> volumes = new LinkedHashMap<>();
    final List<Drain> coldDrains = new ArrayList<>();
    final List<Drain> drains = new ArrayList<>();
    final List<Drain> scale = new ArrayList<>();
    final List<Drain> variants = new ArrayList<>();
    final List<Latency> latency = new ArrayList<>();
    final List<Ceiling> ceilings = new ArrayList<>();
    final List<Profile> profiles = new ArrayList<>();
    final List<WriterRun> writers = new ArrayList<>();
    final List<WriterCase> writerCases = new ArrayList<>();
    final List<Idle> idle = new ArrayList<>();
    final List<Sustainable> sustainable = new ArrayList<>();
    final List<SteadyStep> steady = new ArrayList<>();
    final List<SteadyCost> steadyCosts = new ArrayList<>();
    final List<Priming> priming = new ArrayList<>();
    /** The {@code --relay-variant}s of the run: name -> settings. */
    final Map<String, Map<String, String>> relayVariants = new LinkedHashMap<>();
    Mentions mentions;
    final List<Target> targets = new ArrayList<>();
    final Map<String, Double> phaseSeconds = new LinkedHashMap<>();
    final Map<String, String> phaseErrors = new LinkedHashMap<>();
    double totalSeconds;

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("environment", environment);
        m.put("volumes", volumes);
        m.put("targets", targets);
        m.put("coldDrains", coldDrains);
        m.put("drains", drains);
        m.put("scale", scale);
        m.put("variants", variants);
        m.put("latency", latency);
        m.put("sustainable", sustainable);
        m.put("steadyCosts", steadyCosts);
        m.put("steadySteps", steady);
        m.put("priming", priming);
        m.put("ceilings", ceilings);
        m.put("writerCeiling", writerCases);
        m.put("writerRuns", writers);
        m.put("idle", idle);
        m.put("mentions", mentions);
        m.put("profiles", profiles);
        m.put("phaseSeconds", phaseSeconds);
        m.put("phaseErrors", phaseErrors);
        m.put("totalSeconds", totalSeconds);
        return m;
    }

    static double round1(double v) {
        return Double.isNaN(v) ? v : Math.round(v * 10) / 10.0;
    }

    static double round2(double v) {
        return Double.isNaN(v) ? v : Math.round(v * 100) / 100.0;
    }
}
