package io.outboxrelay.bench;

import io.outboxrelay.embedded.ConnectRestClient;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The shared stack of one benchmark run: the PostgreSQL server, the broker's JVM, the Connect worker JVM and
 * its REST API, the CPU meter; plus the one measurement every drain uses.
 */
final class Bench {
    /** A measurement starts once the whole machine uses less than this over one second... */
    private static final double QUIET_CORES = 0.10;
    /** ...or once this long has passed, which the log then says. */
    private static final long QUIET_TIMEOUT_MS = 30_000;

    private static final AtomicInteger NAMES = new AtomicInteger();
    /** Primed: the worker's and the broker's JIT compilers together used at most this in a priming run. */
    static final double PRIMED_JIT_MS_PER_S = 10;
    /** The longest one contender is primed (a JIT that never goes quiet is then measured as it is). */
    private static final int PRIMING_BUDGET_S = 360;
    private static final int PRIMING_BUDGET_QUICK_S = 40;

    final BenchOptions options;
    final BenchDatabases postgres;
    final BenchKafka kafka;
    final MeasuredWorker worker;
    final ConnectRestClient rest;
    final CpuMeter cpu;
    final Path workDir;
    private final PrintStream out;
    private final Path logConfig;
    /** Every priming run so far ({@link #primeUntilJitQuiet}), for the report. */
    final List<Results.Priming> primings;
    /** The worker with exactly-once source support, started when a contender first needs it. */
    private Bench exactlyOnce;

    Bench(BenchOptions options, BenchDatabases postgres, BenchKafka kafka, MeasuredWorker worker, Path workDir,
          PrintStream out) {
        this(options, postgres, kafka, worker, workDir, out, null);
    }

    Bench(BenchOptions options, BenchDatabases postgres, BenchKafka kafka, MeasuredWorker worker, Path workDir,
          PrintStream out, Path logConfig) {
        this(options, postgres, kafka, worker, workDir, out, logConfig, new java.util.ArrayList<>());
    }

    /** {@code primings}: shared with the bench this one is the exactly-once twin of. */
    private Bench(BenchOptions options, BenchDatabases postgres, BenchKafka kafka, MeasuredWorker worker, Path workDir,
                  PrintStream out, Path logConfig, List<Results.Priming> primings) {
        this.primings = primings;
        this.options = options;
        this.postgres = postgres;
        this.kafka = kafka;
        this.worker = worker;
        this.rest = new ConnectRestClient(worker.restUrl());
        this.cpu = new CpuMeter(worker.pid(), postgres.postmasterPid(), kafka.pid());
        this.workDir = workDir;
        this.out = out;
        this.logConfig = logConfig;
    }

    /** Unmeasured work that warms the JVMs up: one run of it, returning what it used. */
    interface PrimingRun {
        Results.Cpu run(int n) throws Exception;
    }

    /**
     * Repeats {@code run} until the worker's and the broker's JIT compilers used at most {@link #PRIMED_JIT_MS_PER_S}
     * in two runs in a row, or until 6 minutes (quick: 40 s) have passed at the end of a run, which the log then says.
     * A worker that has run for hours compiled its paths long ago; a measurement right after one drain still had the
     * compilers at 100-200 ms/s (bench/README.md, "Warm JVMs"). Each run is kept in {@link #primings}.
     */
    void primeUntilJitQuiet(String phase, String contender, PrimingRun run) throws Exception {
        long budgetMs = (options.quick() ? PRIMING_BUDGET_QUICK_S : PRIMING_BUDGET_S) * 1000L;
        long start = System.nanoTime();
        int quiet = 0;
        for (int n = 1; ; n++) {
            double jit = run.run(n).jitMsPerSecond();
            quiet = jit <= PRIMED_JIT_MS_PER_S ? quiet + 1 : 0;
            boolean spent = quiet < 2 && (System.nanoTime() - start) / 1_000_000 >= budgetMs;
            primings.add(new Results.Priming(phase, contender, n, Results.round1(jit), spent));
            if (spent) {
                log("  !! %s primed for %d s, its JIT still at %.0f ms/s: measured as it is", contender,
                    budgetMs / 1000, jit);
            }
            if (quiet >= 2 || spent) {
                return;
            }
        }
    }

    /**
     * The same stack with the exactly-once worker instead of the benchmark's ({@link ExactlyOnce}): its REST API,
     * and its process in the CPU meter. Started on first use, stopped by {@link #closeExactlyOnce}.
     */
    Bench exactlyOnce() throws Exception {
        if (exactlyOnce == null) {
            long t0 = System.nanoTime();
            MeasuredWorker w = MeasuredWorker.start(kafka.bootstrapServers(), workDir, options.workerHeap(), logConfig,
                "worker-eos", ExactlyOnce.WORKER);
            exactlyOnce = new Bench(options, postgres, kafka, w, workDir, out, logConfig, primings);
            log("  exactly-once worker up after %.0f s (pid %d)", (System.nanoTime() - t0) / 1e9, w.pid());
        }
        return exactlyOnce;
    }

    boolean exactlyOnceStarted() {
        return exactlyOnce != null;
    }

    /** The relay with exactly-once delivery, on the exactly-once worker. */
    RelayContender relayExactlyOnce(int tasks) throws Exception {
        return exactlyOnce().relay(tasks, 1, ExactlyOnce.CONNECTOR, ExactlyOnce.label(tasks), ExactlyOnce.VARIANT);
    }

    void closeExactlyOnce() {
        if (exactlyOnce != null) {
            exactlyOnce.worker.close();
            exactlyOnce = null;
        }
    }

    /** At JVM exit after an interruption. */
    void killExactlyOnce() {
        if (exactlyOnce != null) {
            exactlyOnce.worker.kill();
        }
    }

    /**
     * Waits until what an earlier step left running has ended (a connector's shutdown, a drain's aftermath in the
     * broker and the worker): a step measured without waiting measured that too. {@code what} names it in the log.
     */
    void awaitQuiet(String what) throws InterruptedException {
        double left = cpu.awaitQuiet(QUIET_CORES, 1_000, QUIET_TIMEOUT_MS);
        if (left >= QUIET_CORES) {
            log("  (%s starts with %.2f cores still busy after %d s)", what, left, QUIET_TIMEOUT_MS / 1000);
        }
    }

    void log(String fmt, Object... args) {
        out.printf("[%tT] %s%n", java.time.LocalTime.now(), String.format(fmt, args));
        out.flush();
    }

    /** A fresh name for connectors, topics and slots. */
    static String name(String prefix) {
        return prefix + "-" + NAMES.incrementAndGet();
    }

    /** The relay with {@code --relay-config} and {@code overrides}; {@code variant} "" for the one on defaults. */
    RelayContender relay(int tasks, int subs, Map<String, String> overrides, String label, String variant) {
        Map<String, String> config = new java.util.LinkedHashMap<>(options.relayConfig());
        config.putAll(overrides);
        // a variant that sets its own tasks.max runs, and is waited for with, that many tasks
        int n = RelayVariant.tasks(overrides, tasks);
        return new RelayContender(rest, name("relay-t" + n + "s" + subs), n, subs, config, label, variant);
    }

    /** The relay on its defaults. */
    RelayContender relay(int tasks, int subs, String label) {
        return relay(tasks, subs, Map.of(), label, "");
    }

    /** A {@code --relay-variant}: its settings on top of the defaults, labelled with its name. */
    RelayContender relay(int tasks, RelayVariant v) {
        return relay(tasks, 1, v.config(), v.label(tasks), v.name());
    }

    DebeziumContender debezium(String label) {
        return debezium(label, Map.of(), "");
    }

    /** Debezium with {@code overrides} on its defaults; {@code variant} "" for the one on defaults. */
    DebeziumContender debezium(String label, Map<String, String> overrides, String variant) {
        return new DebeziumContender(rest, kafka, name("dbz"), overrides, label, variant);
    }

    /** Debezium tuned for latency: {@link DebeziumContender#TUNED}, otherwise the same. */
    DebeziumContender debeziumTuned() {
        return debezium(DebeziumContender.TUNED_LABEL, DebeziumContender.TUNED, DebeziumContender.TUNED_VARIANT);
    }

    /**
     * Drains the backlog already committed in {@code db} (ids {@code [idBase, idBase + events)}): starts
     * the contender, and stops the clock when the last of its records is visible to a consumer. With
     * {@code midpointGc} the worker is asked for a full collection when half the records are visible, to
     * read its live heap mid-drain.
     */
    /** A drain that shows no new record for this long has stalled: stop waiting for it. */
    static final long STALL_NANOS = 30_000_000_000L;

    Results.Drain drain(String phase, Contender c, BenchDatabases.Db db, long idBase, int events, boolean midpointGc)
        throws Exception {
        kafka.createTopicsIfMissing(c.topics());
        long records = (long) events * c.recordsPerEvent();
        Duration timeout = Duration.ofSeconds(Math.max(180, events / 500));
        try (RecordWatcher w = new RecordWatcher(kafka, c.topics(), idBase, events, false, c.readCommitted())) {
            long wallStart = System.currentTimeMillis();
            CpuMeter.Sample cpu0 = cpu.sample();
            long t0 = System.nanoTime();
            c.start();
            boolean gcAsked = !midpointGc;
            long deadline = t0 + timeout.toNanos();
            boolean timedOut = false;
            long lastDistinct = -1;
            long lastProgressAt = t0;
            while (w.completedAtNanos() == 0) {
                long now = System.nanoTime();
                if (w.distinct() != lastDistinct) {
                    lastDistinct = w.distinct();
                    lastProgressAt = now;
                }
                if (now > deadline || now - lastProgressAt > STALL_NANOS) {
                    // report what was relayed by then rather than nothing; the label says so
                    timedOut = true;
                    break;
                }
                if (!gcAsked && w.progress() >= 0.5) {
                    worker.forceGc();
                    gcAsked = true;
                }
                if (!worker.alive()) {
                    throw new IllegalStateException("the Connect worker died; see " + workDir.resolve("worker.log"));
                }
                w.awaitComplete(Duration.ofMillis(10));
            }
            CpuMeter.Sample used = cpu.sample().minus(cpu0);
            long t1 = timedOut ? System.nanoTime() : w.completedAtNanos();
            long wallEnd = System.currentTimeMillis();
            String label = c.label();
            if (timedOut) {
                long seen = w.distinct() / c.recordsPerEvent();
                long waited = (System.nanoTime() - t0) / 1_000_000_000L;
                label += String.format(" (INCOMPLETE: %,d of %,d events after %d s)", seen, events, waited);
                log("  !! %s: only %,d of %,d records visible after %d s (none new for the last %d s); reporting the"
                    + " rate so far", c.label(), w.distinct(), records, waited, STALL_NANOS / 1_000_000_000L);
                events = (int) seen;
                records = w.distinct();
            } else {
                c.settle(db);
            }
            long settled = System.nanoTime();
            HeapStats heap = worker.heap(wallStart, wallEnd);
            double seconds = (t1 - t0) / 1e9;
            Results.Drain d = new Results.Drain(phase, label, c.kind(), c.variant(), c.tasks(), c.recordsPerEvent(),
                c instanceof RelayContender r ? r.overrides() : Map.of(), events, records,
                Results.round2(seconds), Math.round(events / seconds), Math.round(records / seconds),
                Results.round1((w.firstAtNanos() - t0) / 1e6), Math.round(events / ((t1 - w.firstAtNanos()) / 1e9)),
                c.kind().equals("relay") ? Results.round1((settled - t0) / 1e6) : Double.NaN, w.duplicates(),
                Results.round1(w.averageRecordBytes()), Results.Cpu.of(used, events), Results.Heap.of(heap, events));
            lastSamples = w.samples();
            log("  %-34s %,9d events in %6.2f s = %,7.0f events/s, %,7.0f records/s (first record %,.0f ms, then %,.0f events/s; worker %.0f,"
                    + " postgres %.0f, broker %.0f, bench %.0f us/event; live heap mid-drain %.0f MB, allocated %.1f KB/event; other processes %.2f cores)",
                c.label(), events, seconds, d.eventsPerSec(), d.recordsPerSec(), d.firstRecordAfterMs(), d.steadyEventsPerSec(),
                d.cpu().workerUsPerEvent(), d.cpu().postgresUsPerEvent(), d.cpu().brokerUsPerEvent(),
                d.cpu().benchUsPerEvent(), d.heap().liveMidDrainMb(), d.heap().allocatedKbPerEvent(), d.cpu().othersCores());
            return d;
        }
    }

    private java.util.List<RecordWatcher.Sample> lastSamples = java.util.List.of();

    /** The record samples of the last drain (bytes exactly as the contender produced them). */
    java.util.List<RecordWatcher.Sample> lastSamples() {
        return lastSamples;
    }
}
