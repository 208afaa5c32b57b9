package io.outboxrelay.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * The benchmark's Kafka node (broker and KRaft controller, {@code kafka.Kafka}) in a JVM of its own, started
 * from this JVM's class path (Kafka's server jars are on it), so that {@code /proc} gives its CPU apart from the
 * writers and the consumer in this JVM and from the worker's JVM: garbage collection and JIT included, which
 * counting the broker's threads inside a shared JVM would miss. Its JVM flags are those Kafka's start scripts
 * use by default; its settings are {@code broker.properties}.
 */
final class BrokerProcess implements AutoCloseable {
    /** kafka-server-start.sh's heap and kafka-run-class.sh's default GC flags. */
    private static final List<String> JVM_FLAGS = List.of("-Xms1g", "-Xmx1g", "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
        "-XX:-UseDynamicNumberOfCompilerThreads"); // CpuMeter.jitMs reads every compiler thread
    private static final Duration STARTUP = Duration.ofSeconds(120);

    private final Process process;
    private final String bootstrapServers;

    private BrokerProcess(Process process, String bootstrapServers) {
        this.process = process;
        this.bootstrapServers = bootstrapServers;
    }

    /** Formats a fresh log directory under {@code workDir}, starts the node and waits until it answers. */
    static BrokerProcess start(Path workDir, Path logConfig) throws IOException, InterruptedException {
        Path dir = Files.createDirectories(workDir.resolve("broker"));
        int port = freePort();
        String config;
        try (InputStream in = BrokerProcess.class.getResourceAsStream("/broker.properties")) {
            config = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        config = config.replace("${port}", Integer.toString(port))
            .replace("${controllerPort}", Integer.toString(freePort()))
            .replace("${logDirs}", dir.resolve("data").toString());
        Path props = dir.resolve("server.properties");
        Files.writeString(props, config);
        List<String> logging = List.of("-Dlog4j2.configurationFile=" + logConfig.toUri(),
            "-Dbench.log=" + dir.resolve("broker.log"));
        Process format = new ProcessBuilder(javaCommand(logging, "kafka.tools.StorageTool",
            List.of("format", "-t", Uuid.randomUuid().toString(), "-c", props.toString())))
            .redirectErrorStream(true).redirectOutput(dir.resolve("format.out").toFile()).start();
        if (!format.waitFor(STARTUP.toSeconds(), TimeUnit.SECONDS) || format.exitValue() != 0) {
            format.destroyForcibly();
            throw new IllegalStateException("formatting the broker's storage failed; see " + dir.resolve("format.out"));
        }
        List<String> flags = new java.util.ArrayList<>(JVM_FLAGS);
        flags.addAll(logging);
        Process proc = new ProcessBuilder(javaCommand(flags, "kafka.Kafka", List.of(props.toString())))
            .redirectErrorStream(true).redirectOutput(dir.resolve("broker.stdout").toFile()).start();
        BrokerProcess broker = new BrokerProcess(proc, "localhost:" + port);
        try {
            broker.awaitUp(dir);
        } catch (RuntimeException e) {
            proc.destroyForcibly();
            throw e;
        }
        return broker;
    }

    /** A child JVM of this JVM's runtime and class path: {@code java FLAGS -cp ... MAIN ARGS}. */
    private static List<String> javaCommand(List<String> flags, String mainClass, List<String> args) {
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(flags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(args);
        return cmd;
    }

    private void awaitUp(Path dir) throws InterruptedException {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        Map<String, Object> cfg = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the broker exited with " + process.exitValue() + " while starting; see "
                    + dir.resolve("broker.stdout") + " and broker.log");
            }
            try (Admin admin = Admin.create(cfg)) {
                if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                    return;
                }
            } catch (Exception notYet) {
                // still starting
            }
            Thread.sleep(250); // a poll interval, not a wait for luck: the loop ends on the broker's answer
        }
        throw new IllegalStateException("the broker did not answer within " + STARTUP.toSeconds() + " s; see "
            + dir.resolve("broker.log"));
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    long pid() {
        return process.pid();
    }

    /** At JVM exit after an interruption: do not outlive the benchmark. */
    void kill() {
        process.destroyForcibly();
    }

    /** SIGTERM, the broker's controlled shutdown; forcibly after 60 s. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
