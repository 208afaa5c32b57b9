package io.outboxrelay.bench;

import io.outboxrelay.embedded.WorkerProcess;
import io.outboxrelay.embedded.WorkerProperties;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's Connect worker, a {@link WorkerProcess} running {@link BenchWorker} with this JVM's class path
 * (both contenders' plugins load from it), a fixed heap and G1, seen from the benchmark: its REST URL, its heap
 * log, forced collections, JFR recordings (through {@code jcmd}) and its process id for CPU accounting.
 */
final class MeasuredWorker implements AutoCloseable {
    private final WorkerProcess process;
    private final Path heapLog;

    private MeasuredWorker(WorkerProcess process, Path heapLog) {
        this.process = process;
        this.heapLog = heapLog;
    }

    static MeasuredWorker start(String bootstrapServers, Path workDir, String heap, Path logConfig) {
        return start(bootstrapServers, workDir, heap, logConfig, "worker", Map.of());
    }

    /**
     * A worker whose files are {@code <name>.properties}, {@code <name>.log}, ... and whose group and internal
     * topics are its own when {@code name} is not {@code worker}; {@code extra} is added to its properties.
     */
    static MeasuredWorker start(String bootstrapServers, Path workDir, String heap, Path logConfig, String name,
                                Map<String, String> extra) {
        Map<String, String> props = workerProps(bootstrapServers, name.equals("worker") ? "bench-connect"
            : "bench-connect-" + name);
        props.putAll(extra);
        Path heapLog = workDir.resolve(name + "-heap.log");
        List<String> flags = List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC",
            "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints",
            "-XX:-UseDynamicNumberOfCompilerThreads", // CpuMeter.jitMs reads every compiler thread
            "-Dlog4j2.configurationFile=" + logConfig.toUri(),
            "-Dbench.log=" + workDir.resolve(name + ".log"));
        WorkerProcess process = new WorkerProcess(name, workDir,
            Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator)), flags,
            BenchWorker.class.getName(), props, List.of(heapLog.toString()));
        try {
            process.start();
        } catch (RuntimeException e) {
            throw new IllegalStateException("starting the Connect worker failed: " + e.getMessage(), e);
        }
        return new MeasuredWorker(process, heapLog);
    }

    /** What a connect-distributed.properties for this one-broker setup holds; the same for every contender. */
    static Map<String, String> workerProps(String bootstrapServers, String group) {
        Map<String, String> p = WorkerProperties.distributed(bootstrapServers, group);
        p.put("offset.flush.interval.ms", "10000");
        p.put("scheduled.rebalance.max.delay.ms", "0");
        p.put("connector.client.config.override.policy", "All");
        return p;
    }

    String restUrl() {
        return process.restUrl();
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.alive();
    }

    /** Asks the worker for a full collection; its live heap appears in the heap log as a {@code live} line. */
    void forceGc() {
        try {
            process.send("gc");
        } catch (IOException e) {
            throw new IllegalStateException("the worker is gone: " + e.getMessage(), e);
        }
    }

    /** Heap figures of the worker between two wall-clock instants (epoch ms). */
    HeapStats heap(long fromMs, long toMs) throws IOException {
        return HeapStats.read(heapLog, fromMs, toMs);
    }

    void jfrStart(String name) {
        jcmd("JFR.start", "name=" + name, "settings=profile");
    }

    void jfrStop(String name, Path file) {
        jcmd("JFR.stop", "name=" + name, "filename=" + file.toAbsolutePath());
    }

    private void jcmd(String... args) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        List<String> cmd = new ArrayList<>();
        cmd.add(Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd");
        cmd.add(Long.toString(process.pid()));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** At JVM exit after an interruption: no graceful stop, just do not outlive the benchmark. */
    void kill() {
        process.kill();
    }

    /** {@code stop} on its standard input (the worker stops Connect and exits), then SIGTERM if it lingers. */
    @Override
    public void close() {
        try {
            process.send("stop");
            if (process.awaitExit(Duration.ofSeconds(60))) {
                return;
            }
        } catch (IOException ignored) {
            // already gone
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.kill();
            return;
        }
        process.close();
    }
}
