package io.outboxrelay.connector.faults;

import com.fasterxml.jackson.databind.JsonNode;
import io.outboxrelay.embedded.ConnectRestClient;
import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.embedded.WorkerProperties;
import io.outboxrelay.embedded.WorkerProcess;
import io.outboxrelay.testsupport.CapturingLogProvider;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A fault test's Kafka Connect worker: a {@link WorkerProcess} ({@code ConnectDistributed}, or
 * {@code ConnectStandalone} through {@link #standalone}) with the connector installed the way users install
 * it: {@code plugin.path} pointing at the unpacked plugin archive, and {@code plugin.discovery=service_load},
 * so a plugin without its ServiceLoader manifest or without a bundled dependency fails here. It doubles as the
 * packaging test. The class path is Kafka's alone ({@link ChildJvm#kafkaClasspath}), with
 * {@link CapturingLogProvider} as the SLF4J backend; the files are under {@code connector/target/faults/}.
 *
 * <p>{@link #kill()} is a SIGKILL (no shutdown hook runs: no flush, no stamp, no lease release);
 * {@link #stop()} is a SIGTERM, on which Connect stops its tasks cleanly. {@link #start()} starts it
 * again with the same group and internal topics, so the connector resumes where it was.
 */
final class FaultWorker implements AutoCloseable {
    private final WorkerProcess process;
    private final ConnectRestClient rest;

    /**
     * A distributed worker (group {@code faults-<name>}, internal topics {@code faults-<name>-*}).
     *
     * @param bootstrapServers the broker the worker uses for its internal topics and its producers
     * @param workerOverrides extra worker properties (they win over the defaults here)
     * @param extraJvmArgs e.g. JMX flags for a heap check
     */
    FaultWorker(String name, String bootstrapServers, Map<String, String> workerOverrides, List<String> extraJvmArgs) {
        this(name, distributed(name, bootstrapServers), workerOverrides, extraJvmArgs, false, ChildJvm.pluginPath(),
            null);
    }

    FaultWorker(String name, String bootstrapServers) {
        this(name, bootstrapServers, Map.of(), List.of());
    }

    /**
     * A standalone worker ({@code ConnectStandalone}): no group membership, so losing the broker does not
     * make it stop its tasks; connectors are created through its REST API and do not survive a restart.
     */
    static FaultWorker standalone(String name, String bootstrapServers) {
        return standalone(name, bootstrapServers, ChildJvm.pluginPath());
    }

    /**
     * A standalone worker whose {@code plugin.path} is {@code pluginPath}: a directory a user unzipped the
     * release archive into.
     */
    static FaultWorker standalone(String name, String bootstrapServers, Path pluginPath) {
        return standalone(name, bootstrapServers, pluginPath, null, List.of());
    }

    /**
     * A standalone worker of another Kafka line: {@code kafkaClasspath} (that line's {@code connect-runtime} and
     * everything it needs) stands in for this JVM's Kafka, and {@code plugin.path} is {@code pluginPath}.
     */
    static FaultWorker standalone(String name, String bootstrapServers, Path pluginPath, List<String> kafkaClasspath,
                                  List<String> extraJvmArgs) {
        Path dir = ChildJvm.workDir("worker-" + name);
        return new FaultWorker(dir, name, WorkerProperties.standalone(bootstrapServers, dir.resolve("offsets").toString()),
            Map.of(), extraJvmArgs, true, pluginPath, kafkaClasspath);
    }

    private FaultWorker(String name, Map<String, String> props, Map<String, String> workerOverrides,
                        List<String> extraJvmArgs, boolean standalone, Path pluginPath, List<String> kafkaClasspath) {
        this(ChildJvm.workDir("worker-" + name), name, props, workerOverrides, extraJvmArgs, standalone, pluginPath,
            kafkaClasspath);
    }

    private FaultWorker(Path dir, String name, Map<String, String> props, Map<String, String> workerOverrides,
                        List<String> extraJvmArgs, boolean standalone, Path pluginPath, List<String> kafkaClasspath) {
        List<String> cp = new ArrayList<>(kafkaClasspath != null ? kafkaClasspath
            : ChildJvm.kafkaClasspath(ChildJvm.pluginJarNames(pluginPath)));
        cp.add(0, ChildJvm.loggingClasspathEntry().toString());
        List<String> jvm = new ArrayList<>(List.of("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC",
            // C1 only: a worker that starts several times per test on 2 cores must start fast
            "-XX:TieredStopAtLevel=1",
            "-D" + CapturingLogProvider.LEVEL + "=" + System.getProperty("faults.worker.log", "WARN"),
            "-D" + CapturingLogProvider.INFO_PREFIXES + "=io.outboxrelay,org.apache.kafka.connect.runtime.Worker,"
                + "org.apache.kafka.connect.runtime.distributed.DistributedHerder,org.apache.kafka.connect.cli",
            "-Dlog4j2.level=WARN"));
        jvm.addAll(extraJvmArgs);
        Map<String, String> all = new LinkedHashMap<>(props);
        all.put("plugin.path", pluginPath.toString());
        all.put("offset.flush.interval.ms", "1000");
        all.put("task.shutdown.graceful.timeout.ms", "10000");
        all.putAll(workerOverrides);
        this.process = new WorkerProcess(name, dir, cp, jvm,
            "org.apache.kafka.connect.cli." + (standalone ? "ConnectStandalone" : "ConnectDistributed"), all, List.of());
        this.rest = process.rest();
    }

    private static Map<String, String> distributed(String name, String bootstrapServers) {
        Map<String, String> props = WorkerProperties.distributed(bootstrapServers, "faults-" + name);
        props.put("offset.storage.partitions", "1");
        props.put("status.storage.partitions", "1");
        // after a SIGKILL the restarted worker is a new member: hand it the lost tasks at once
        props.put("scheduled.rebalance.max.delay.ms", "0");
        props.put("session.timeout.ms", "6000");
        props.put("heartbeat.interval.ms", "1000");
        return props;
    }

    /** Starts the worker process and waits until its REST API answers. */
    FaultWorker start() {
        process.start();
        return this;
    }

    /** SIGKILL: the worker dies mid-flight, like a machine losing power. */
    void kill() {
        process.kill();
    }

    /** SIGTERM: Connect's shutdown hook stops every task cleanly, then the JVM exits. */
    void stop() {
        process.stop();
    }

    boolean alive() {
        return process.alive();
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return process.log();
    }

    String logText() {
        return process.logText();
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
        process.close();
    }
}
