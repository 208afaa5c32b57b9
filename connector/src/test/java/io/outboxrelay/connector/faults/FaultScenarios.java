package io.outboxrelay.connector.faults;

import static org.awaitility.Awaitility.await;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.testsupport.PostgresServer;
import io.outboxrelay.testsupport.TestDatabase;
import java.time.Duration;
import java.time.LocalTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;

/**
 * What the fault scenarios share: the connector config, the volumes (small in the default suite, the
 * issue's under {@code -Pfaults}), waiting for a drain, and a progress log that lands in the failsafe
 * output file.
 */
final class FaultScenarios {
    /** Set by the {@code faults} Maven profile: full volumes, and the long scenarios run. */
    static final String FULL_PROPERTY = "outboxrelay.faults.full";
    static final boolean FULL = Boolean.getBoolean(FULL_PROPERTY);

    /** Two subscriptions: one wants every event, one only {@code order.*}. */
    static final List<String> TYPES = List.of("order.created", "user.updated", "order.paid", "note.added");

    private FaultScenarios() {
    }

    /**
     * A PostgreSQL server of a fault test's own, which the test can stop ({@code -m immediate}) and start again
     * on the same data directory ({@code connector/target/faults/postgres-<name>-<n>/data}) and port.
     */
    static LocalPostgres postgres(String name) {
        return postgres(name, Map.of());
    }

    /** The same with server settings of the test's own. */
    static LocalPostgres postgres(String name, Map<String, String> settings) {
        PostgresBuilder builder = new PostgresBuilder()
            .dataDirectory(ChildJvm.workDir("postgres-" + name).resolve("data"))
            // zonky turns it off; a crash would then forget commits it already acknowledged (stamps
            // come back unstamped and are delivered again), which is the database's doing, not the relay's
            .setting("synchronous_commit", "on")
            .maxConnections(100);
        settings.forEach(builder::setting);
        return builder.start();
    }

    /** A new database on {@code server} with the project's schema files applied, as the superuser. */
    static TestDatabase createDatabase(LocalPostgres server, String name) {
        return PostgresServer.of(server).createDatabase(name, "");
    }

    static int events(int defaultSuite, int full) {
        return FULL ? full : defaultSuite;
    }

    static List<Subscription> subscriptions(String prefix) {
        return List.of(Subscription.all("all", prefix + "-all"), new Subscription("orders", prefix + "-orders", "order.*"));
    }

    /** A relay connector for {@code db}; converters come from the worker (string keys, schemaless JSON values). */
    static Map<String, String> relayConfig(TestDatabase db, List<Subscription> subscriptions, int tasks) {
        Map<String, String> cfg = new HashMap<>(db.connectionProps());
        cfg.put("connector.class", "io.outboxrelay.connector.OutboxSourceConnector");
        cfg.put("tasks.max", Integer.toString(tasks));
        cfg.put("subscriptions", subscriptions.stream().map(Subscription::name).collect(Collectors.joining(",")));
        subscriptions.forEach(s -> cfg.putAll(s.config()));
        cfg.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        cfg.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        cfg.put("value.converter.schemas.enable", "false");
        cfg.put("outbox.sweep.interval.ms", "2000");
        cfg.put("outbox.backoff.initial.ms", "200");
        cfg.put("outbox.backoff.max.ms", "2000");
        cfg.put("outbox.lease.ms", "30000");
        return cfg;
    }

    /** Inserts {@code count} events over {@code subjects} subjects, in chunks of 5,000 per transaction. */
    static void insertEvents(TestDatabase db, int count, int subjects) {
        for (int done = 0; done < count; done += 5_000) {
            db.insertEvents(Math.min(5_000, count - done), subjects, TYPES.toArray(new String[0]));
        }
    }

    /** Waits until no row is pending; on timeout the message shows the outbox's state. */
    static void awaitDrained(TestDatabase db, Duration timeout) {
        awaitOrDescribe(timeout, () -> OutboxLedger.backlog(db) == 0,
            () -> "outbox not drained: " + OutboxLedger.state(db));
    }

    static void awaitOrDescribe(Duration timeout, BooleanSupplier condition, Callable<String> describe) {
        try {
            await().atMost(timeout).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            String state;
            try {
                state = describe.call();
            } catch (Exception ex) {
                state = "(could not describe: " + ex + ")";
            }
            throw new AssertionError("timed out after " + timeout + ": " + state, e);
        }
    }

    /** What {@link #terminateSessions} did: rounds of {@code pg_terminate_backend}, sessions it ended. */
    record Terminations(int rounds, long sessions) {
    }

    /**
     * Scenario 3's fault: every session of {@code connector} on {@code db} terminated, every 150-600 ms, for
     * {@code killing}, while {@code eventsPerSecond} new events keep the relay busy on top of its backlog.
     */
    static Terminations terminateSessions(TestDatabase db, String connector, Duration killing, int eventsPerSecond)
        throws InterruptedException {
        int rounds = 0;
        long terminated = 0;
        try (LoadGenerator load = new LoadGenerator(db, eventsPerSecond, 300).start()) {
            long until = System.nanoTime() + killing.toNanos();
            while (System.nanoTime() < until) {
                Thread.sleep(ThreadLocalRandom.current().nextLong(150, 600)); // the faults' cadence, not a wait
                terminated += db.queryLong("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    + "WHERE application_name LIKE ? AND datname = current_database()", "outbox-relay:" + connector + "%");
                rounds++;
            }
            log("%s: terminated %d sessions in %d rounds over %s; %d events committed meanwhile; %d rows stamped: %s",
                connector, terminated, rounds, killing, load.inserted(), OutboxLedger.stamped(db), OutboxLedger.state(db));
        }
        return new Terminations(rounds, terminated);
    }

    static void log(String message, Object... args) {
        System.out.println(LocalTime.now() + " [faults] " + String.format(message, args));
    }

    /** Logs a scenario's check results in one block the report can quote. */
    static DeliveryChecker.Reports logged(String scenario, DeliveryChecker.Reports reports) {
        log("%s delivery check:%n%s", scenario, reports);
        return reports;
    }
}
