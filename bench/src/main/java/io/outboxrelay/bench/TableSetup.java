package io.outboxrelay.bench;

import java.util.Map;

/**
 * What the writer-ceiling, idle and steady phases run against: the shipped schema changed by {@code schemaSql}
 * (empty: as shipped), and nothing, the relay (2 tasks, 1 subscription, defaults plus the wake-up's
 * settings) or Debezium running on it, with {@code config} on top of its defaults.
 */
record TableSetup(String key, String label, String schemaSql, Kind kind, Map<String, String> config,
                  String variant) {
    enum Kind { NONE, RELAY, DEBEZIUM }

    static final int RELAY_TASKS = 2;

    static TableSetup table(String key, String label, String schemaSql) {
        return new TableSetup(key, label, schemaSql, Kind.NONE, Map.of(), "");
    }

    static TableSetup relay(WakeupVariant w) {
        return new TableSetup("relay-" + w.name(), "relay " + RELAY_TASKS + " tasks, wake-up " + w.name(),
            w.schemaSql(), Kind.RELAY, w.relayConfig(), w == WakeupVariant.SHIPPED ? "" : "wakeup-" + w.name());
    }

    /** A {@code --relay-variant} on the shipped schema. */
    static TableSetup relay(RelayVariant v) {
        return new TableSetup("relay-" + v.name(), "relay " + v.tasks(RELAY_TASKS) + " tasks, variant " + v.name() + " ("
            + v.settings() + ")", "", Kind.RELAY, v.config(), v.name());
    }

    /** Debezium on the same table, our trigger dropped. */
    static TableSetup debezium() {
        return new TableSetup("debezium", "Debezium + EventRouter (no trigger)", WakeupVariant.DROP_TRIGGERS,
            Kind.DEBEZIUM, Map.of(), "");
    }

    /** The latency-tuned Debezium ({@link DebeziumContender#TUNED}) on the same table, our trigger dropped. */
    static TableSetup debeziumTuned() {
        return new TableSetup("debezium-tuned", DebeziumContender.TUNED_LABEL + " (no trigger)",
            WakeupVariant.DROP_TRIGGERS, Kind.DEBEZIUM, DebeziumContender.TUNED, DebeziumContender.TUNED_VARIANT);
    }

    /** Changes the schema of {@code db} and, if this setup has one, starts its connector and waits until it runs. */
    Contender start(Bench b, BenchDatabases.Db db) throws Exception {
        applySchema(db);
        Contender c = contender(b);
        if (c != null) {
            b.kafka.createTopicsIfMissing(c.topics());
            c.prepare(db);
            c.start();
            c.awaitRunning();
        }
        return c;
    }

    /** Runs this setup's change to the shipped schema, if it has one. */
    private void applySchema(BenchDatabases.Db db) {
        if (!schemaSql.isBlank()) {
            db.execute(schemaSql);
        }
    }

    /** This setup's connector, not yet prepared; null for a table alone. */
    private Contender contender(Bench b) {
        return switch (kind) {
            case NONE -> null;
            case RELAY -> b.relay(RELAY_TASKS, 1, config, label, variant);
            case DEBEZIUM -> b.debezium(label, config, variant);
        };
    }
}
