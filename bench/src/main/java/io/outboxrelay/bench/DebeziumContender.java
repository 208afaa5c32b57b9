package io.outboxrelay.bench;

import io.outboxrelay.embedded.ConnectRestClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Debezium's PostgreSQL connector ({@code pgoutput}, one task: it cannot have more) with the outbox
 * {@code EventRouter} SMT, reading the very same {@code events} table the relay reads: the router is
 * pointed at its columns ({@code id}, {@code subject} as key, {@code payload}, routed by {@code type}
 * to one topic). Defaults otherwise, unless {@code overrides} says so.
 *
 * <p>{@link #prepare} creates the connector on an empty table (it creates its replication slot and a
 * filtered publication), relays a few priming events so that it has committed offsets, then stops it
 * ({@code PUT /connectors/x/stop}: no task runs). A backlog written now is only in the WAL and the slot;
 * {@link #start()} resumes it, so it drains from the WAL, and {@link #pause()} stops it again.
 */
final class DebeziumContender implements Contender {
    static final long PRIMING_ID_BASE = 2_000_000_000L;
    private static final int PRIMING_EVENTS = 100;

    /**
     * The latency-tuned contender: the connector's poll of its internal queue every 10 ms instead of 500 ms (the
     * default). Everything else is the same.
     */
    static final Map<String, String> TUNED = Map.of("poll.interval.ms", "10");
    static final String TUNED_LABEL = "Debezium + EventRouter, poll.interval.ms=10";
    static final String TUNED_VARIANT = "poll-10ms";

    private final ConnectRestClient rest;
    private final BenchKafka kafka;
    private final String name;
    private final Map<String, String> overrides;
    private final String label;
    private final String variant;
    private final String topic;
    private BenchDatabases.Db db;
    private long primed;

    DebeziumContender(ConnectRestClient rest, BenchKafka kafka, String name, Map<String, String> overrides, String label,
                      String variant) {
        this.rest = rest;
        this.kafka = kafka;
        this.name = name;
        this.overrides = overrides;
        this.variant = variant == null ? "" : variant;
        this.label = label != null ? label : "Debezium + EventRouter";
        this.topic = name + ".outbox";
    }

    @Override
    public String label() {
        return label;
    }

    @Override
    public String kind() {
        return "debezium";
    }

    @Override
    public String variant() {
        return variant;
    }

    @Override
    public int tasks() {
        return 1;
    }

    @Override
    public int recordsPerEvent() {
        return 1;
    }

    @Override
    public List<String> topics() {
        return List.of(topic);
    }

    Map<String, String> config() {
        Map<String, String> cfg = new LinkedHashMap<>();
        cfg.put("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        cfg.put("tasks.max", "1");
        cfg.put("database.hostname", "localhost");
        cfg.put("database.port", Integer.toString(db.port()));
        cfg.put("database.user", "postgres");
        cfg.put("database.password", "postgres");
        cfg.put("database.dbname", db.name());
        cfg.put("topic.prefix", name);
        cfg.put("plugin.name", "pgoutput");
        cfg.put("slot.name", name.replace('-', '_').replace('.', '_'));
        cfg.put("publication.name", name.replace('-', '_').replace('.', '_') + "_pub");
        cfg.put("publication.autocreate.mode", "filtered");
        cfg.put("table.include.list", "public.events");
        cfg.put("snapshot.mode", "no_data");
        cfg.put("tombstones.on.delete", "false");
        cfg.put("transforms", "outbox");
        cfg.put("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
        cfg.put("transforms.outbox.table.field.event.id", "id");
        cfg.put("transforms.outbox.table.field.event.key", "subject");
        cfg.put("transforms.outbox.table.field.event.payload", "payload");
        cfg.put("transforms.outbox.route.by.field", "type");
        cfg.put("transforms.outbox.route.topic.replacement", topic);
        cfg.put("transforms.outbox.table.fields.additional.placement", "type:header:event.type");
        cfg.putAll(overrides);
        return cfg;
    }

    @Override
    public void prepare(BenchDatabases.Db db) throws Exception {
        this.db = db;
        rest.put(name, config(), Duration.ofSeconds(60));
        awaitRunning();
        // prime: a few events through, so the task has committed offsets before it is stopped
        long base = PRIMING_ID_BASE + primed;
        try (RecordWatcher w = new RecordWatcher(kafka, topics(), base, PRIMING_EVENTS, false)) {
            db.insertBacklog(base, PRIMING_EVENTS, PRIMING_EVENTS);
            if (!w.awaitComplete(Duration.ofSeconds(120))) {
                throw new IllegalStateException(label + " did not relay its priming events within 120 s");
            }
        }
        primed += PRIMING_EVENTS;
        pause();
    }

    @Override
    public void start() {
        rest.resume(name);
    }

    @Override
    public void awaitRunning() throws InterruptedException {
        rest.awaitState(name, "RUNNING", 1, Duration.ofSeconds(120));
    }

    @Override
    public void settle(BenchDatabases.Db db) {
        // nothing to write back: Debezium's bookkeeping is its offsets and the slot's confirmed LSN
    }

    @Override
    public void pause() throws InterruptedException {
        rest.stop(name);
        rest.awaitState(name, "STOPPED", 0, Duration.ofSeconds(120));
    }

    @Override
    public void close() throws InterruptedException {
        rest.delete(name, Duration.ofSeconds(60));
    }
}
