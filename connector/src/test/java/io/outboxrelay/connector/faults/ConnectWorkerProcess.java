package io.outboxrelay.connector.faults;

import com.fasterxml.jackson.databind.JsonNode;
import io.outboxrelay.embedded.ConnectRestClient;
import io.outboxrelay.embedded.ConnectRestClient.Reply;
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
import java.util.stream.Collectors;

/**
 * A real Kafka Connect worker in its own OS process
 * ({@code org.apache.kafka.connect.cli.ConnectDistributed worker.properties}, or
 * {@code ConnectStandalone} through {@link #standalone}), with the connector
 * installed the way users install it: {@code plugin.path} pointing at the unpacked plugin archive, and
 * {@code plugin.discovery=service_load}, so a plugin without its ServiceLoader manifest or without a
 * bundled dependency fails here. It doubles as the packaging test.
 *
 * <p>{@link #kill()} is a SIGKILL (no shutdown hook runs: no flush, no stamp, no lease release);
 * {@link #stop()} is a SIGTERM, on which Connect stops its tasks cleanly. {@link #start()} starts it
 * again with the same group and internal topics, so the connector resumes where it was.
 */
final class ConnectWorkerProcess implements AutoCloseable {

    private final String name;
    private final Path dir;
    private final Path log;
    private final Path properties;
    private final int restPort;
    private final ConnectRestClient rest;
    private final List<String> classpath;
    private final List<String> jvmArgs;
    private final boolean standalone;
    private Process process;
    private int starts;

    /**
     * A distributed worker (group {@code faults-<name>}, internal topics {@code faults-<name>-*}).
     *
     * @param bootstrapServers the broker the worker uses for its internal topics and its producers
     * @param workerOverrides extra worker properties (they win over the defaults here)
     * @param extraJvmArgs e.g. JMX flags for a heap check
     */
    ConnectWorkerProcess(String name, String bootstrapServers, Map<String, String> workerOverrides,
                         List<String> extraJvmArgs) {
        this(name, bootstrapServers, workerOverrides, extraJvmArgs, false, ChildJvm.pluginPath(), null);
    }

    /**
     * A standalone worker ({@code ConnectStandalone}): no group membership, so losing the broker does not
     * make it stop its tasks; connectors are created through its REST API and do not survive a restart.
     */
    static ConnectWorkerProcess standalone(String name, String bootstrapServers) {
        return new ConnectWorkerProcess(name, bootstrapServers, Map.of(), List.of(), true, ChildJvm.pluginPath(), null);
    }

    /**
     * A standalone worker whose {@code plugin.path} is {@code pluginPath}: a directory a user unzipped the
     * release archive into.
     */
    static ConnectWorkerProcess standalone(String name, String bootstrapServers, Path pluginPath) {
        return new ConnectWorkerProcess(name, bootstrapServers, Map.of(), List.of(), true, pluginPath, null);
    }

    /**
     * A standalone worker of another Kafka line: {@code kafkaClasspath} (that line's {@code connect-runtime} and
     * everything it needs) stands in for this JVM's Kafka, and {@code plugin.path} is {@code pluginPath}.
     */
    static ConnectWorkerProcess standalone(String name, String bootstrapServers, Path pluginPath,
                                           List<String> kafkaClasspath, List<String> extraJvmArgs) {
        return new ConnectWorkerProcess(name, bootstrapServers, Map.of(), extraJvmArgs, true, pluginPath,
            kafkaClasspath);
    }

    private ConnectWorkerProcess(String name, String bootstrapServers, Map<String, String> workerOverrides,
                                 List<String> extraJvmArgs, boolean standalone, Path pluginPath,
                                 List<String> kafkaClasspath) {
        this.name = name;
        this.standalone = standalone;
        this.dir = ChildJvm.workDir("worker-" + name);
        this.log = dir.resolve("worker.log");
        this.properties = dir.resolve("worker.properties");
        this.restPort = ChildJvm.freePort();
        this.rest = new ConnectRestClient("http://localhost:" + restPort, Duration.ofSeconds(30));
        List<String> cp = new ArrayList<>(kafkaClasspath != null ? kafkaClasspath
            : ChildJvm.kafkaClasspath(ChildJvm.pluginJarNames(pluginPath)));
        cp.add(0, ChildJvm.loggingClasspathEntry().toString());
        this.classpath = cp;
        List<String> jvm = new ArrayList<>(List.of("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC",
            // C1 only: a worker that starts several times per test on 2 cores must start fast
            "-XX:TieredStopAtLevel=1",
            "-D" + CapturingLogProvider.LEVEL + "=" + System.getProperty("faults.worker.log", "WARN"),
            "-D" + CapturingLogProvider.INFO_PREFIXES + "=io.outboxrelay,org.apache.kafka.connect.runtime.Worker,"
                + "org.apache.kafka.connect.runtime.distributed.DistributedHerder,org.apache.kafka.connect.cli",
            "-Dlog4j2.level=WARN"));
        jvm.addAll(extraJvmArgs);
        this.jvmArgs = jvm;

        Map<String, String> props = new LinkedHashMap<>();
        props.put("bootstrap.servers", bootstrapServers);
        if (standalone) {
            props.put("offset.storage.file.filename", dir.resolve("offsets").toString());
        } else {
            props.put("group.id", "faults-" + name);
            props.put("config.storage.topic", "faults-" + name + "-configs");
            props.put("offset.storage.topic", "faults-" + name + "-offsets");
            props.put("status.storage.topic", "faults-" + name + "-status");
            props.put("config.storage.replication.factor", "1");
            props.put("offset.storage.replication.factor", "1");
            props.put("offset.storage.partitions", "1");
            props.put("status.storage.replication.factor", "1");
            props.put("status.storage.partitions", "1");
            // after a SIGKILL the restarted worker is a new member: hand it the lost tasks at once
            props.put("scheduled.rebalance.max.delay.ms", "0");
            props.put("session.timeout.ms", "6000");
            props.put("heartbeat.interval.ms", "1000");
        }
        props.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        props.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        props.put("value.converter.schemas.enable", "false");
        props.put("listeners", "http://localhost:" + restPort);
        props.put("rest.advertised.host.name", "localhost");
        props.put("rest.advertised.port", Integer.toString(restPort));
        props.put("plugin.path", pluginPath.toString());
        props.put("plugin.discovery", "service_load");
        props.put("offset.flush.interval.ms", "1000");
        props.put("task.shutdown.graceful.timeout.ms", "10000");
        props.putAll(workerOverrides);
        try {
            Files.writeString(properties, props.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    ConnectWorkerProcess(String name, String bootstrapServers) {
        this(name, bootstrapServers, Map.of(), List.of());
    }

    /** Starts the worker process and waits until its REST API answers. */
    ConnectWorkerProcess start() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("worker " + name + " is already running");
        }
        appendToLog("===== start #" + (++starts) + " =====");
        process = ChildJvm.start(classpath, jvmArgs, "org.apache.kafka.connect.cli."
                + (standalone ? "ConnectStandalone" : "ConnectDistributed"),
            List.of(properties.toString()), log);
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("worker " + name + " exited with " + process.exitValue()
                    + " while starting; see " + log);
            }
            try {
                if (rest.get("connectors").status() == 200) {
                    return this;
                }
            } catch (UncheckedIOException notYet) {
                // not listening yet
            }
            ChildJvm.sleep(250);
        }
        throw new IllegalStateException("worker " + name + " did not answer on port " + restPort + " within 120 s; see " + log);
    }

    /** SIGKILL: the worker dies mid-flight, like a machine losing power. */
    void kill() {
        appendToLog("===== SIGKILL =====");
        ChildJvm.stop(process, true, Duration.ofSeconds(30));
    }

    /** SIGTERM: Connect's shutdown hook stops every task cleanly, then the JVM exits. */
    void stop() {
        appendToLog("===== SIGTERM =====");
        ChildJvm.stop(process, false, Duration.ofSeconds(90));
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return log;
    }

    String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "";
        }
    }

    /** Creates or updates a connector (PUT /connectors/{name}/config). */
    void configureConnector(String connector, Map<String, String> config) {
        Reply r = rest.request("PUT", "connectors/" + connector + "/config", config);
        if (r.status() != 200 && r.status() != 201) {
            throw new IllegalStateException("PUT connector " + connector + " -> " + r.status() + ": " + r.body());
        }
    }

    /** PUT /connector-plugins/{class}/config/validate: what the worker says of {@code config}. */
    JsonNode validate(Map<String, String> config) {
        Reply r = rest.request("PUT", "connector-plugins/" + config.get("connector.class") + "/config/validate", config);
        if (r.status() != 200) {
            throw new IllegalStateException("validate -> " + r.status() + ": " + r.body());
        }
        return r.json();
    }

    void deleteConnector(String connector) {
        rest.request("DELETE", "connectors/" + connector, null);
    }

    /** Task states by task id, e.g. {0: RUNNING}; empty while the connector is unknown or unassigned. */
    Map<Integer, String> taskStates(String connector) {
        Reply r = rest.get("connectors/" + connector + "/status");
        Map<Integer, String> out = new LinkedHashMap<>();
        if (r.status() == 200) {
            for (JsonNode t : r.json().get("tasks")) {
                out.put(t.get("id").asInt(), t.get("state").asText());
            }
        }
        return out;
    }

    /** GET /connectors/{name}/status as text (task states and the trace of a FAILED task), for messages. */
    String statusJson(String connector) {
        return rest.get("connectors/" + connector + "/status").body();
    }

    boolean tasksRunning(String connector, int count) {
        try {
            Map<Integer, String> states = taskStates(connector);
            return states.size() == count && states.values().stream().allMatch("RUNNING"::equals);
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    boolean anyTaskFailed(String connector) {
        try {
            return taskStates(connector).containsValue("FAILED");
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    /** GET /connector-plugins: the connector classes the worker found on its plugin.path, with their versions. */
    JsonNode connectorPlugins() {
        Reply r = rest.get("connector-plugins");
        if (r.status() != 200) {
            throw new IllegalStateException("GET connector-plugins -> " + r.status() + ": " + r.body());
        }
        return r.json();
    }

    /** GET /: the Kafka version the worker runs, e.g. {@code 3.9.2}. */
    String version() {
        Reply r = rest.get("");
        if (r.status() != 200) {
            throw new IllegalStateException("GET / -> " + r.status() + ": " + r.body());
        }
        return r.json().path("version").asText();
    }

    /** POST /connectors/{name}/tasks/{id}/restart */
    void restartTask(String connector, int task) {
        rest.request("POST", "connectors/" + connector + "/tasks/" + task + "/restart", null);
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

    private void appendToLog(String line) {
        try {
            Files.writeString(log, java.time.LocalTime.now() + " " + line + "\n",
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException ignored) {
            // the marker is only a reading aid
        }
    }
}
