package io.outboxrelay.connector.faults;

import io.outboxrelay.testsupport.CapturingLogProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * A single-node KRaft Kafka (broker and controller in one process, {@code kafka.Kafka
 * server.properties}) in its own OS process, on fixed ports and a fixed log directory, so it can be
 * stopped for a while and started again as the same broker: clients reconnect to the same address and
 * find their topics and offsets where they left them. The in-JVM test cluster cannot do this: its
 * brokers come back on new ports.
 */
final class KafkaBrokerProcess implements AutoCloseable {
    private final String name;
    private final Path log;
    private final Path properties;
    private final int port;
    private final List<String> classpath;
    private Process process;
    private int starts;

    KafkaBrokerProcess(String name) {
        this.name = name;
        Path dir = ChildJvm.workDir("kafka-" + name);
        this.log = dir.resolve("broker.log");
        this.properties = dir.resolve("server.properties");
        this.port = ChildJvm.freePort();
        int controllerPort = ChildJvm.freePort();
        List<String> cp = new ArrayList<>(ChildJvm.kafkaClasspath(Set.of()));
        cp.add(0, ChildJvm.loggingClasspathEntry().toString());
        this.classpath = cp;

        Map<String, String> props = new LinkedHashMap<>();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@localhost:" + controllerPort);
        props.put("listeners", "PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort);
        props.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("log.dirs", dir.resolve("data").toString());
        props.put("num.partitions", "3");
        props.put("auto.create.topics.enable", "true");
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "3");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("share.coordinator.state.topic.replication.factor", "1");
        props.put("share.coordinator.state.topic.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        try {
            Files.writeString(properties, props.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ChildJvm.run(classpath, "kafka.tools.StorageTool",
            List.of("format", "-t", Uuid.randomUuid().toString(), "-c", properties.toString()), log,
            Duration.ofSeconds(120));
    }

    String bootstrapServers() {
        return "localhost:" + port;
    }

    /** Starts the broker and waits until it answers a metadata request. */
    KafkaBrokerProcess start() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("broker " + name + " is already running");
        }
        starts++;
        process = ChildJvm.start(classpath, List.of("-Xms256m", "-Xmx768m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-D" + CapturingLogProvider.LEVEL + "=WARN",
                "-D" + CapturingLogProvider.INFO_PREFIXES + "=kafka.server.KafkaRaftServer,kafka.Kafka",
                "-Dlog4j2.level=WARN"),
            "kafka.Kafka", List.of(properties.toString()), log);
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        Map<String, Object> cfg = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("broker " + name + " exited with " + process.exitValue()
                    + " while starting (start #" + starts + "); see " + log);
            }
            try (Admin admin = Admin.create(cfg)) {
                if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                    return this;
                }
            } catch (Exception notYet) {
                // still starting
            }
            ChildJvm.sleep(500);
        }
        throw new IllegalStateException("broker " + name + " did not come up within 120 s; see " + log);
    }

    /** SIGTERM: a controlled shutdown; {@link #start()} brings the same broker back. */
    void stop() {
        ChildJvm.stop(process, false, Duration.ofSeconds(90));
    }

    /** SIGKILL. */
    void kill() {
        ChildJvm.stop(process, true, Duration.ofSeconds(30));
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    Path log() {
        return log;
    }

    @Override
    public void close() {
        if (alive()) {
            try {
                stop();
            } catch (RuntimeException e) {
                ChildJvm.stop(process, true, Duration.ofSeconds(30));
            }
        }
    }
}
