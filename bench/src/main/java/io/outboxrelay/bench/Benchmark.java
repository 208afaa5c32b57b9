package io.outboxrelay.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.LogManager;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * {@code ./bench.sh}: the relay against Debezium's outbox router on one PostgreSQL server, one broker
 * and one Connect worker. Phases: warm-up (cold drains), ceilings (producer alone, claim+stamp SQL
 * alone), drains (relay with 1/2 tasks and 1/3 subscriptions, Debezium, and the exactly-once relay on a worker
 * of its own: {@link ExactlyOnce}), scale (backlogs up to 1M with
 * the worker's heap), steady latency (fixed-rate writer), the sustainable rate (stepped fixed rates), tuning
 * variants, the steady-rate cost (CPU per event over the writers alone), a JFR-profiled drain, mention recovery,
 * idle CPU, and the writer ceiling (durable single-event commits/s per wake-up). Writes {@code <timestamp>.json}, {@code results.md} and PNG charts.
 */
public final class Benchmark {
    private static final String DEBEZIUM_VERSION = "3.6.1.Final";

    private final BenchOptions options;
    private final PrintStream out;
    private final Results results = new Results();
    private Bench bench;
    private List<RecordWatcher.Sample> relaySamples = List.of();
    private List<RecordWatcher.Sample> debeziumSamples = List.of();

    private CpuMeter.Sample machineAtStart;
    private long childrenMs;

    private Benchmark(BenchOptions options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        LogManager.getLogManager().getLogger("").setLevel(Level.SEVERE);
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            System.err.print(BenchOptions.USAGE);
            System.exit(2);
            return;
        }
        if (options.help()) {
            System.out.print(BenchOptions.USAGE);
            return;
        }
        int status;
        try {
            status = new Benchmark(options, System.out).run();
        } catch (RefusedVariant e) {
            System.err.println("bench: " + e.getMessage());
            status = 2;
        }
        System.exit(status);
    }

    private int run() throws Exception {
        long started = System.nanoTime();
        machineAtStart = CpuMeter.machine().sample();
        results.environment.put("loadAverageAtStart", loadAverage());
        String stamp = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));
        Path workDir = options.home().resolve("bench").resolve("target").resolve("run-" + stamp);
        Files.createDirectories(workDir);
        Files.createDirectories(options.out());
        describe(stamp);
        log("Benchmark %s (%s mode), work dir %s", stamp, options.quick() ? "quick" : "full", workDir);
        Path logConfig = workDir.resolve("worker-log4j2.properties");
        try (var in = Benchmark.class.getResourceAsStream("/worker-log4j2.properties")) {
            Files.copy(in, logConfig);
        }
        log("Starting PostgreSQL, the broker and the Connect worker ...");
        try (BenchDatabases pg = BenchDatabases.start(options.home(), workDir);
             BenchKafka kafka = startKafka(started, workDir, logConfig)) {
            MeasuredWorker worker = MeasuredWorker.start(kafka.bootstrapServers(), workDir, options.workerHeap(),
                logConfig);
            // Ctrl-C: the worker and broker JVMs and PostgreSQL are child processes; do not leave them behind
            Thread cleanup = new Thread(() -> {
                worker.kill();
                if (bench != null) {
                    bench.killExactlyOnce();
                }
                kafka.kill();
                try {
                    pg.shutdown();
                } catch (Exception ignored) {
                    // exiting anyway
                }
            }, "bench-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
            log("  worker up after %.0f s", (System.nanoTime() - started) / 1e9);
            try {
                bench = new Bench(options, pg, kafka, worker, workDir, out, logConfig);
                results.environment.put("postgres", pg.createDatabase("version").query("SHOW server_version").get(0)
                    .get(0));
                results.environment.put("gitCommit", git("rev-parse", "HEAD"));
                results.environment.put("gitUncommittedFiles", git("status", "--porcelain").lines().count());
                results.environment.put("postgresDurability", pg.durability());
                results.environment.put("postgresDataFileSystem", pg.dataFileSystem());
                log("PostgreSQL %s, data on %s", pg.durability(), pg.dataFileSystem());
                log("Stack up after %.0f s (worker pid %d, REST %s)", (System.nanoTime() - started) / 1e9,
                    worker.pid(), worker.restUrl());
                checkRelayVariants();
                phase("warmup", this::warmup);
                phase("ceilings", this::ceilings);
                phase("drain", this::drains);
                phase("scale", this::scale);
                phase("latency", this::latency);
                phase("sustainable", () -> SustainablePhase.run(bench, results.sustainable));
                phase("steady", () -> SteadyPhase.run(bench, results.steady, results.steadyCosts));
                phase("variants", this::variants);
                phase("profile", this::profile);
                phase("mentions", () -> results.mentions = MentionPhase.run(bench, options.mentionMessages()));
                phase("idle", () -> results.idle.addAll(IdlePhase.run(bench)));
                phase("writers", this::writers);
                CpuMeter.Sample end = bench.cpu.sample();
                childrenMs = end.workerMs() + end.postgresMs() + end.brokerMs();
            } finally {
                if (bench != null) {
                    bench.closeExactlyOnce();
                }
                worker.close();
                Runtime.getRuntime().removeShutdownHook(cleanup);
            }
        }
        results.totalSeconds = Results.round1((System.nanoTime() - started) / 1e9);
        CpuMeter.Sample whole = CpuMeter.machine().sample().minus(machineAtStart);
        results.environment.put("otherProcessesCores", Results.round2(
            Math.max(0, whole.machineBusyMs() - whole.benchMs() - benchChildrenMs()) / (double) whole.wallMs()));
        results.environment.put("loadAverageAtEnd", loadAverage());
        Targets.evaluate(results);
        write(stamp);
        log("Done in %.0f s (%.1f min); results in %s", results.totalSeconds, results.totalSeconds / 60,
            options.out());
        return results.phaseErrors.isEmpty() ? 0 : 1;
    }

    private BenchKafka startKafka(long started, Path workDir, Path logConfig) throws Exception {
        log("  PostgreSQL up after %.0f s", (System.nanoTime() - started) / 1e9);
        BenchKafka kafka = BenchKafka.start(workDir, logConfig);
        log("  broker up after %.0f s", (System.nanoTime() - started) / 1e9);
        return kafka;
    }

    private interface Phase {
        void run() throws Exception;
    }

    private void phase(String name, Phase p) {
        if (!options.runs(name)) {
            return;
        }
        log("== %s", name);
        long t0 = System.nanoTime();
        try {
            p.run();
        } catch (Exception | Error e) {
            results.phaseErrors.put(name, e.toString());
            log("!! phase %s failed: %s", name, e);
            e.printStackTrace(out);
        } finally {
            results.phaseSeconds.put(name, Results.round1((System.nanoTime() - t0) / 1e9));
        }
    }

    /** Each contender's first drain in the worker JVM: the cold numbers, and the record samples for ceilings. */
    private void warmup() throws Exception {
        results.coldDrains.add(relayDrain("warmup", bench.relay(1, 1, null), options.warmupEvents(), false));
        relaySamples = bench.lastSamples();
        if (options.debezium()) {
            results.coldDrains.add(debeziumDrain("warmup", options.warmupEvents()));
            debeziumSamples = bench.lastSamples();
        }
    }

    private void ceilings() throws Exception {
        if (relaySamples.isEmpty()) {
            relayDrain("warmup", bench.relay(1, 1, null), options.warmupEvents(), false);
            relaySamples = bench.lastSamples();
        }
        long n = options.drainEvents();
        results.ceilings.add(Ceilings.producer(bench, relaySamples, n, Map.of(),
            "producer, relay records, Connect settings"));
        results.ceilings.add(Ceilings.producer(bench, relaySamples, n, Map.of("batch.size", 65536),
            "producer, relay records, batch.size 64 KiB"));
        if (!debeziumSamples.isEmpty()) {
            results.ceilings.add(Ceilings.producer(bench, debeziumSamples, n, Map.of(),
                "producer, Debezium records, Connect settings"));
        }
        results.ceilings.add(Ceilings.sql(bench, (int) n, 1, 200));
        results.ceilings.add(Ceilings.sql(bench, (int) n, 2, 200));
    }

    private void drains() throws Exception {
        int n = options.drainEvents();
        results.drains.add(relayDrain("drain", bench.relay(1, 1, null), n, true));
        results.drains.add(relayDrain("drain", bench.relay(2, 1, null), n, true));
        results.drains.add(relayDrain("drain", bench.relay(1, 3, null), n, true));
        results.drains.add(relayDrain("drain", bench.relay(2, 3, null), n, true));
        if (options.debezium()) {
            results.drains.add(debeziumDrain("drain", n));
        }
        // after the headline rows, so that a variant that fails costs only the variants' rows
        for (RelayVariant v : options.relayVariants()) {
            results.drains.add(relayDrain("drain", bench.relay(2, v), n, true));
        }
        // issue 25: what exactly-once costs, beside the relay on its defaults (its own worker: ExactlyOnce)
        for (int tasks : new int[] {1, 2}) {
            results.drains.add(relayDrain(exactlyOnce(), "drain", bench.relayExactlyOnce(tasks), n, true));
        }
        if (options.debezium()) {
            // a second, alternating round of the headline comparison: the worker JVM keeps getting faster well
            // after the warm-up (bench/README, "rematch"), so one round in a fixed order favours whoever runs
            // last; the targets take each contender's best round
            results.drains.add(debeziumDrain("rematch", n));
            results.drains.add(relayDrain("rematch", bench.relay(2, 1, "relay 2 tasks, 1 sub (rematch)"), n, false));
            for (RelayVariant v : options.relayVariants()) {
                results.drains.add(relayDrain("rematch", bench.relay(2, 1, v.config(), v.label(2) + " (rematch)",
                    v.name()), n, false));
            }
        }
    }

    private void scale() throws Exception {
        for (int backlog : options.scaleBacklogs()) {
            Results.Drain reuse = results.drains.stream()
                .filter(d -> d.kind().equals("relay") && d.tasks() == 1 && d.subscriptions() == 1
                    && d.variant().isEmpty() && d.events() == backlog).findFirst().orElse(null);
            results.scale.add(reuse != null ? reuse : relayDrain("scale", bench.relay(1, 1, null), backlog, true));
        }
    }

    /** Settings a user can change today, measured on the same drain (and the latency one at 1,000/s). */
    private void variants() throws Exception {
        if (!options.variants()) {
            return;
        }
        int n = options.drainEvents();
        results.variants.add(relayDrain("variant", bench.relay(1, 1, Map.of("outbox.batch.size", "1000"),
            "relay 1 task, 1 sub, batch 1000", "batch-1000"), n, true));
        results.variants.add(relayDrain("variant", bench.relay(1, 1, Map.of("producer.override.batch.size", "65536",
            "producer.override.linger.ms", "10"), "relay 1 task, 1 sub, producer batch 64 KiB", "producer-batch-64k"),
            n, true));
        // the connector's default is synchronous_commit=off on its own sessions; this is the durable setting
        Map<String, String> syncCommit = Map.of("connection.synchronous.commit", "on");
        results.variants.add(relayDrain("variant", bench.relay(1, 1, syncCommit,
            "relay 1 task, 1 sub, synchronous_commit=on", "sync-commit"), n, true));
        int seconds = Math.max(10, options.latencySeconds() / 2);
        results.latency.addAll(LatencyPhase.run(bench, bench.relay(1, 1, syncCommit,
            "relay 1 task, 1 sub, synchronous_commit=on", "sync-commit"), List.of(1000), seconds));
        // the producer sends at once instead of waiting linger.ms (5 ms by default since Kafka 4.0) for a fuller batch
        results.latency.addAll(LatencyPhase.run(bench, bench.relay(1, 1, Map.of("producer.override.linger.ms", "0"),
            "relay 1 task, 1 sub, producer linger.ms=0", "linger-0"), List.of(1000), seconds));
    }

    private void latency() throws Exception {
        results.latency.add(WakeupProbe.run(bench, 1000, options.latencySeconds()));
        // unmeasured: the first relay run after the warm-up drain measured twice the p50 of the same run later, with the
        // worker's and the broker's JIT compilers still busy
        primeLatency(bench, () -> bench.relay(1, 1, null));
        results.latency.addAll(LatencyPhase.run(bench, bench.relay(1, 1, null), options.latencyRates(),
            options.latencySeconds()));
        if (options.debezium()) {
            // the tuned one right after its priming, as the relay: it is the relay's latency peer
            primeLatency(bench, bench::debeziumTuned);
            results.latency.addAll(LatencyPhase.run(bench, bench.debeziumTuned(), options.latencyRates(),
                options.latencySeconds()));
            results.latency.addAll(LatencyPhase.run(bench, bench.debezium(null), options.latencyRates(),
                options.latencySeconds()));
        }
        for (RelayVariant v : options.relayVariants()) {
            results.latency.addAll(LatencyPhase.run(bench, bench.relay(1, v), options.latencyRates(),
                options.latencySeconds()));
        }
        Bench eos = exactlyOnce();
        primeLatency(eos, () -> eos.relay(1, 1, ExactlyOnce.CONNECTOR, ExactlyOnce.label(1), ExactlyOnce.VARIANT));
        results.latency.addAll(LatencyPhase.run(eos, bench.relayExactlyOnce(1), options.latencyRates(),
            options.latencySeconds()));
    }

    /**
     * Runs of a contender at every latency rate (half the seconds each), unmeasured, until the JVMs are warm: judged
     * by the rate whose window compiled most.
     */
    private void primeLatency(Bench on, java.util.function.Supplier<Contender> contender) throws Exception {
        String label = contender.get().label();
        on.primeUntilJitQuiet("latency", label, n -> {
            on.log("  priming: %s (not measured, #%d)", label, n);
            return LatencyPhase.run(on, contender.get(), options.latencyRates(), Math.max(3, options.latencySeconds() / 2))
                .stream().map(Results.Latency::cpu).max(java.util.Comparator.comparingDouble(Results.Cpu::jitMsPerSecond))
                .orElseThrow();
        });
    }

    /**
     * The exactly-once worker ({@link ExactlyOnce}); when this starts it, its first drain in the fresh JVM is a
     * cold drain, reported as the warm-up's are, so that its measured rows meet a warm JVM like every other's.
     */
    private Bench exactlyOnce() throws Exception {
        boolean fresh = !bench.exactlyOnceStarted();
        Bench eos = bench.exactlyOnce();
        if (fresh) {
            results.coldDrains.add(relayDrain(eos, "warmup", bench.relayExactlyOnce(1), options.warmupEvents(), false));
        }
        return eos;
    }

    /**
     * Each {@code --relay-variant} started once on an empty database before anything is measured: settings the
     * connector refuses stop the run now, with the worker's reason, instead of failing phases later.
     */
    private void checkRelayVariants() throws Exception {
        for (RelayVariant v : options.relayVariants()) {
            BenchDatabases.Db db = bench.postgres.createDatabase("variant_check");
            RelayContender c = bench.relay(1, v);
            try {
                c.prepare(db);
                c.start();
                c.awaitRunning();
            } catch (RuntimeException e) {
                throw new RefusedVariant("--relay-variant=" + v.name() + " (" + v.settings() + "): the relay does not"
                    + " run with these settings: " + e.getMessage(), e);
            } finally {
                c.close();
                bench.postgres.dropDatabase(db);
            }
            log("  --relay-variant=%s (%s): the relay runs with it", v.name(), v.settings());
        }
    }

    /** A {@code --relay-variant} whose settings the relay does not run with: the run stops before measuring. */
    private static final class RefusedVariant extends Exception {
        private static final long serialVersionUID = 1L;

        RefusedVariant(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The writer ceiling; the summary is kept even when a later measurement fails. */
    private void writers() throws Exception {
        try {
            WritersPhase.run(bench, results.writers);
        } finally {
            results.writerCases.addAll(WritersPhase.summarize(results.writers));
        }
    }

    private void profile() throws Exception {
        int n = options.drainEvents();
        BenchDatabases.Db db = bench.postgres.createDatabase("profile");
        RelayContender c = bench.relay(1, 1, "relay 1 task, 1 sub (JFR on)");
        try {
            c.prepare(db);
            db.insertBacklog(0, n, options.backlogTxnSize());
            db.execute("SELECT pg_stat_statements_reset()");
            bench.worker.jfrStart("bench-profile");
            Results.Drain d = bench.drain("profile", c, db, 0, n, false);
            Path jfr = bench.workDir.resolve("relay-drain.jfr");
            bench.worker.jfrStop("bench-profile", jfr);
            Map<String, Object> summary = Profiler.summarize(jfr);
            results.profiles.add(new Results.Profile(d.label(), d.events(), d.seconds(), d.eventsPerSec(), d.cpu(),
                summary, Profiler.sqlStatements(db), options.home().relativize(jfr).toString()));
            log("  profile: %s samples; top components %s", summary.get("samples"), summary.get("components"));
        } finally {
            c.close();
            bench.postgres.dropDatabase(db);
        }
    }

    /** A fresh database with {@code events} committed, then the relay {@code c} created: one drain. */
    private Results.Drain relayDrain(String phase, RelayContender c, int events, boolean midpointGc) throws Exception {
        return relayDrain(bench, phase, c, events, midpointGc);
    }

    /** The same on the worker of {@code b} (the exactly-once one: {@link Bench#exactlyOnce}). */
    private Results.Drain relayDrain(Bench b, String phase, RelayContender c, int events, boolean midpointGc)
        throws Exception {
        BenchDatabases.Db db = bench.postgres.createDatabase("drain");
        try {
            c.prepare(db);
            db.insertBacklog(0, events, options.backlogTxnSize());
            return b.drain(phase, c, db, 0, events, midpointGc);
        } finally {
            c.close();
            bench.postgres.dropDatabase(db);
        }
    }

    /**
     * A fresh database and a fresh Debezium connector (so a fresh slot, created at the current end of the WAL):
     * prepared on the empty table and stopped, then the backlog is committed and the connector resumed.
     */
    private Results.Drain debeziumDrain(String phase, int events) throws Exception {
        BenchDatabases.Db db = bench.postgres.createDatabase("debezium");
        DebeziumContender c = bench.debezium(phase.equals("rematch") ? "Debezium + EventRouter (rematch)" : null);
        try {
            bench.kafka.createTopicsIfMissing(c.topics());
            c.prepare(db);
            db.insertBacklog(0, events, options.backlogTxnSize());
            return bench.drain(phase, c, db, 0, events, !phase.equals("warmup"));
        } finally {
            c.close();
            bench.postgres.dropDatabase(db);
        }
    }

    private void describe(String stamp) {
        Map<String, Object> env = results.environment;
        env.put("timestamp", stamp);
        env.put("mode", options.quick() ? "quick" : "full");
        env.put("cpus", Runtime.getRuntime().availableProcessors());
        env.put("memoryGiB", Math.round(((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
            .getOperatingSystemMXBean()).getTotalMemorySize() / (1024.0 * 1024 * 1024)));
        env.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        env.put("java", System.getProperty("java.version"));
        env.put("kafka", AppInfoParser.getVersion());
        env.put("debezium", options.debezium() ? DEBEZIUM_VERSION : "not run");
        env.put("workerHeap", options.workerHeap());
        env.put("converters", "key StringConverter, value JsonConverter (schemas.enable=false), for every contender");
        env.put("cpuAccounting", CpuMeter.available() ? "/proc" : "n/a");
        Map<String, Object> v = results.volumes;
        v.put("drainEvents", options.drainEvents());
        v.put("warmupEvents", options.warmupEvents());
        v.put("latencyRates", options.latencyRates());
        v.put("latencySeconds", options.latencySeconds());
        v.put("scaleBacklogs", options.scaleBacklogs());
        v.put("mentionMessages", options.mentionMessages());
        v.put("backlogEventsPerTransaction", options.backlogTxnSize());
        v.put("payloadBytes", BenchEvents.PAYLOAD_BYTES);
        v.put("subjects", BenchEvents.SUBJECTS);
        v.put("phases", new ArrayList<>(options.phases()));
        v.put("relayConfig", options.relayConfig());
        BenchOptions.WriterOptions w = options.writers();
        v.put("writerSecondsPerMeasurement", w.seconds());
        v.put("writerWarmupSeconds", w.warmupSeconds());
        v.put("writerRounds", w.rounds());
        v.put("writerConnections", w.connections());
        v.put("idleSeconds", w.idleSeconds());
        Map<String, String> wakeups = new java.util.LinkedHashMap<>();
        for (WakeupVariant x : List.of(WakeupVariant.SHIPPED, WakeupVariant.LEGACY, WakeupVariant.POLLING)) {
            wakeups.put(x.name(), x.description());
        }
        w.extraWakeups().forEach(x -> wakeups.put(x.name(), x.description()));
        v.put("wakeups", wakeups);
        options.relayVariants().forEach(x -> results.relayVariants.put(x.name(), new java.util.TreeMap<>(x.config())));
        v.put("relayVariants", results.relayVariants);
        v.put("relayTasksInDrainSustainableIdleWriters", TableSetup.RELAY_TASKS);
        v.put("debeziumTuned", DebeziumContender.TUNED);
        BenchOptions.SustainableOptions so = options.sustainable();
        v.put("sustainableRates", so.rates());
        v.put("sustainableWarmupSeconds", so.warmupSeconds());
        v.put("sustainableSecondsPerStep", so.seconds());
        v.put("sustainableWriterConnections", so.connections());
        v.put("sustainableDeliverySeconds", so.deliverySeconds());
        v.put("latencyWriterConnections", PacedWriter.CONNECTIONS);
        BenchOptions.SteadyOptions st = options.steady();
        v.put("steadyRates", st.rates());
        v.put("steadyWarmupSeconds", st.warmupSeconds());
        v.put("steadySecondsPerStep", st.seconds());
        v.put("steadyWriterConnections", st.connections());
        v.put("steadyDeliverySeconds", st.deliverySeconds());
        v.put("steadyUpdatedRows", st.updatedRows());
        v.put("steadyHotSubject", st.hotSubject());
    }

    /** What {@code git args} prints in the project's directory, trimmed; "" when git cannot tell. */
    private String git(String... args) {
        try {
            List<String> cmd = new java.util.ArrayList<>(List.of("git", "-C", options.home().toString()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String printed = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            return p.waitFor() == 0 ? printed.trim() : "";
        } catch (java.io.IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private void write(String stamp) throws Exception {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        Path dir = options.out();
        results.priming.clear();
        if (bench != null) {
            results.priming.addAll(bench.primings);
        }
        json.writeValue(dir.resolve(stamp + ".json").toFile(), results.toMap());
        // the link from wherever --out put the report (bench/results/ by default) to bench/README.md
        String readme = dir.toAbsolutePath().normalize()
            .relativize(options.home().resolve("bench").resolve("README.md").toAbsolutePath().normalize()).toString()
            .replace('\\', '/');
        String md = Report.markdown(results, stamp, "", readme);
        Files.writeString(dir.resolve("results.md"), md);
        try {
            if (!results.drains.isEmpty() || !results.ceilings.isEmpty()) {
                Charts.throughput(results, dir.resolve("throughput.png"));
            }
            if (!results.latency.isEmpty()) {
                Charts.latencyCdf(results, dir.resolve("latency-cdf.png"));
            }
            if (!results.scale.isEmpty()) {
                Charts.scale(results, dir.resolve("scale.png"));
            }
            if (!results.sustainable.isEmpty()) {
                Charts.sustainable(results, dir.resolve("sustainable.png"));
            }
            if (!results.steadyCosts.isEmpty()) {
                SteadyChart.draw(results, dir.resolve("steady.png"));
            }
        } catch (Exception | Error e) {
            log("charts could not be drawn (%s); the JSON and results.md are complete", e);
        }
        log("Wrote %s, results.md and charts to %s", stamp + ".json", dir);
    }

    /** CPU of the worker, PostgreSQL and the broker over the whole run (read just before they stopped). */
    private long benchChildrenMs() {
        return childrenMs;
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (Exception e) {
            return "n/a";
        }
    }

    private void log(String fmt, Object... args) {
        out.printf("[%tT] %s%n", java.time.LocalTime.now(), String.format(fmt, args));
        out.flush();
    }
}
