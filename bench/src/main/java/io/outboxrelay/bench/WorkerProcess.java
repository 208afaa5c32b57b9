package io.outboxrelay.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The Connect worker JVM ({@link BenchWorker}) seen from the benchmark: started with this JVM's class
 * path, a fixed heap and G1; its REST URL, its heap log, forced collections, JFR recordings (through
 * {@code jcmd}) and its process id for CPU accounting.
 */
final class WorkerProcess implements AutoCloseable {
    private final Process process;
    private final Writer commands;
    private final Path heapLog;
    private final String restUrl;

    private WorkerProcess(Process process, Path heapLog, String restUrl) {
        this.process = process;
        this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.heapLog = heapLog;
        this.restUrl = restUrl;
    }

    static WorkerProcess start(String bootstrapServers, Path workDir, String heap, Path logConfig)
        throws IOException, InterruptedException {
        return start(bootstrapServers, workDir, heap, logConfig, "worker", Map.of());
    }

    /**
     * A worker whose files are {@code <name>.properties}, {@code <name>.log}, ... and whose group and internal
     * topics are its own when {@code name} is not {@code worker}; {@code extra} is added to its properties.
     */
    static WorkerProcess start(String bootstrapServers, Path workDir, String heap, Path logConfig, String name,
                               Map<String, String> extra) throws IOException, InterruptedException {
        Properties p = new Properties();
        p.putAll(workerProps(bootstrapServers));
        if (!name.equals("worker")) {
            String group = "bench-connect-" + name;
            p.putAll(Map.of("group.id", group, "config.storage.topic", group + "-configs",
                "offset.storage.topic", group + "-offsets", "status.storage.topic", group + "-status"));
        }
        p.putAll(extra);
        Path props = workDir.resolve(name + ".properties");
        try (var out = Files.newBufferedWriter(props)) {
            p.store(out, "benchmark Connect worker");
        }
        Path heapLog = workDir.resolve(name + "-heap.log");
        List<String> cmd = javaCommand(List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC",
            "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints",
            "-Dlog4j2.configurationFile=" + logConfig.toUri(),
            "-Dbench.log=" + workDir.resolve(name + ".log")),
            BenchWorker.class.getName(), List.of(props.toString(), heapLog.toString()));
        Process proc = new ProcessBuilder(cmd)
            .redirectError(workDir.resolve(name + ".stderr").toFile())
            .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> rest = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                String line;
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("BENCH-WORKER-REST ")) {
                        rest.complete(line.substring("BENCH-WORKER-REST ".length()).trim());
                    }
                }
            } catch (IOException ignored) {
                // the worker exited
            }
            rest.completeExceptionally(new IllegalStateException("the worker exited before its REST API was up; see "
                + workDir.resolve(name + ".stderr") + " and " + name + ".log"));
        }, "bench-worker-stdout");
        reader.setDaemon(true);
        reader.start();
        try {
            String url = rest.get(120, TimeUnit.SECONDS);
            return new WorkerProcess(proc, heapLog, url.endsWith("/") ? url : url + "/");
        } catch (Exception e) {
            proc.destroyForcibly();
            throw new IllegalStateException("starting the Connect worker failed: " + e.getMessage(), e);
        }
    }

    /** A child JVM of this JVM's runtime and class path: {@code java FLAGS -cp ... MAIN ARGS}. */
    static List<String> javaCommand(List<String> flags, String mainClass, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(flags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(args);
        return cmd;
    }

    /** What a connect-distributed.properties for this one-broker setup holds; the same for every contender. */
    static Map<String, String> workerProps(String bootstrapServers) {
        return Map.ofEntries(
            Map.entry("bootstrap.servers", bootstrapServers),
            Map.entry("group.id", "bench-connect"),
            Map.entry("config.storage.topic", "bench-connect-configs"),
            Map.entry("offset.storage.topic", "bench-connect-offsets"),
            Map.entry("status.storage.topic", "bench-connect-status"),
            Map.entry("config.storage.replication.factor", "1"),
            Map.entry("offset.storage.replication.factor", "1"),
            Map.entry("status.storage.replication.factor", "1"),
            Map.entry("key.converter", "org.apache.kafka.connect.storage.StringConverter"),
            Map.entry("value.converter", "org.apache.kafka.connect.json.JsonConverter"),
            Map.entry("value.converter.schemas.enable", "false"),
            Map.entry("listeners", "http://localhost:0"),
            Map.entry("plugin.discovery", "service_load"),
            Map.entry("offset.flush.interval.ms", "10000"),
            Map.entry("scheduled.rebalance.max.delay.ms", "0"),
            Map.entry("connector.client.config.override.policy", "All"));
    }

    String restUrl() {
        return restUrl;
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    /** Asks the worker for a full collection; its live heap appears in the heap log as a {@code live} line. */
    void forceGc() {
        try {
            commands.write("gc\n");
            commands.flush();
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
        process.destroyForcibly();
    }

    @Override
    public void close() {
        try {
            commands.write("stop\n");
            commands.close();
        } catch (IOException ignored) {
            // already gone
        }
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroy();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
