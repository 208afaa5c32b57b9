package io.outboxrelay.bench;

import io.outboxrelay.embedded.ConnectRestClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The relay ({@code io.outboxrelay.connector.OutboxSourceConnector}) with {@code tasks} tasks and
 * {@code subscriptions} subscriptions that all take every event type, on its defaults unless
 * {@code overrides} says otherwise. Each start creates the connector; each pause deletes it (its tasks
 * stop gracefully and give their leases back).
 */
final class RelayContender implements Contender {

    private final ConnectRestClient rest;
    private final String name;
    private final int tasks;
    private final int subscriptions;
    private final Map<String, String> overrides;
    private final String label;
    private final String variant;
    private final List<String> topics = new ArrayList<>();
    private BenchDatabases.Db db;

    RelayContender(ConnectRestClient rest, String name, int tasks, int subscriptions, Map<String, String> overrides,
                   String label, String variant) {
        this.rest = rest;
        this.name = name;
        this.tasks = tasks;
        this.subscriptions = subscriptions;
        this.overrides = overrides;
        this.variant = variant == null ? "" : variant;
        this.label = label != null ? label : "relay " + tasks + (tasks == 1 ? " task, " : " tasks, ") + subscriptions
            + (subscriptions == 1 ? " sub" : " subs");
        for (int i = 1; i <= subscriptions; i++) {
            topics.add(name + ".sub" + i);
        }
    }

    @Override
    public String label() {
        return label;
    }

    @Override
    public String kind() {
        return "relay";
    }

    @Override
    public String variant() {
        return variant;
    }

    @Override
    public boolean readCommitted() {
        return variant.equals(ExactlyOnce.VARIANT);
    }

    @Override
    public int tasks() {
        return tasks;
    }

    @Override
    public int recordsPerEvent() {
        return subscriptions;
    }

    @Override
    public List<String> topics() {
        return topics;
    }

    Map<String, String> overrides() {
        return overrides;
    }

    @Override
    public void prepare(BenchDatabases.Db db) {
        this.db = db;
    }

    Map<String, String> config() {
        Map<String, String> cfg = new LinkedHashMap<>();
        cfg.put("connector.class", "io.outboxrelay.connector.OutboxSourceConnector");
        cfg.put("tasks.max", Integer.toString(tasks));
        cfg.put("connection.url", db.jdbcUrl());
        cfg.put("connection.user", "postgres");
        List<String> names = new ArrayList<>();
        for (int i = 1; i <= subscriptions; i++) {
            String sub = "sub" + i;
            names.add(sub);
            cfg.put("subscription." + sub + ".topic", topics.get(i - 1));
        }
        cfg.put("subscriptions", String.join(",", names));
        cfg.putAll(overrides);
        return cfg;
    }

    @Override
    public void start() throws InterruptedException {
        rest.put(name, config(), Duration.ofSeconds(60));
    }

    @Override
    public void awaitRunning() throws InterruptedException {
        rest.awaitState(name, "RUNNING", tasks, Duration.ofSeconds(60));
    }

    /** Waits until every row is stamped (bookkeeping after delivery, not part of a drain's time). */
    @Override
    public void settle(BenchDatabases.Db db) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(label + ": rows still unstamped 60 s after the last record arrived");
    }

    @Override
    public void pause() throws InterruptedException {
        rest.delete(name, Duration.ofSeconds(60));
    }

    @Override
    public void close() throws InterruptedException {
        rest.delete(name, Duration.ofSeconds(60));
    }
}
