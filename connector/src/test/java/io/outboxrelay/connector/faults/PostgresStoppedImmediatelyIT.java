package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.testsupport.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scenario 4: PostgreSQL is stopped with {@code pg_ctl -m immediate} in the middle of a drain (every
 * session dies at once, no checkpoint) and started again a while later (crash recovery): the tasks
 * recover by themselves, without a restart through the REST API, and nothing is lost. Guards against a
 * task that fails on the outage's errors (connection refused, "the database system is starting up")
 * instead of backing off, or that never notices the server came back.
 *
 * <p>Run twice. With {@code connection.synchronous.commit=on} a stamp the relay committed survives the
 * crash, so only rows in flight when the server died come again: duplicates stay within every task's
 * in-flight window. With the default {@code off} the crash may also undo the stamps of the last WAL
 * writer rounds (a few hundred milliseconds of draining, thousands of rows at full speed): those rows
 * are delivered again, which is allowed, and nothing may be lost, which is what that run checks.
 */
class PostgresStoppedImmediatelyIT {
    private static final String CONNECTOR_PREFIX = "faults-pg-immediate-sync-";
    private static final int BATCH = 100;
    private static final int INFLIGHT_BATCHES = 4;
    private static final int TASKS = 2;
    private static LocalPostgres server;
    private String connector;

    @BeforeAll
    static void startServer() {
        server = FaultScenarios.postgres("immediate");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void deleteConnector() {
        if (connector != null) {
            TestConnect.cluster().deleteConnector(connector);
        }
    }

    @ParameterizedTest(name = "connection.synchronous.commit={0}")
    @ValueSource(strings = {"on", "off"})
    void aDrainSurvivesPostgresStoppedImmediatelyAndStartedAgain(String synchronousCommit) throws Exception {
        int events = FaultScenarios.events(5_000, 20_000);
        Duration outage = Duration.ofSeconds(FaultScenarios.FULL ? 30 : 6);
        connector = CONNECTOR_PREFIX + synchronousCommit; // own topics per run
        TestDatabase db = FaultScenarios.createDatabase(server, "faults_pg_immediate_sync_" + synchronousCommit);
        FaultScenarios.insertEvents(db, events, 300);
        db.throttleRowUpdates("events", 1_000); // ~1,000 rows/s: the crash lands mid-drain
        List<Subscription> subscriptions = FaultScenarios.subscriptions(connector);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, TASKS);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.batch.max.size", Integer.toString(BATCH)); // the duplicate bound: max size x in flight
        cfg.put("outbox.max.inflight.batches", Integer.toString(INFLIGHT_BATCHES));
        cfg.put("connection.synchronous.commit", synchronousCommit);
        TestConnect.cluster().configureConnector(connector, cfg);

        // watch the task states through the whole outage: recovering "by itself" means never FAILED
        AtomicBoolean sawFailed = new AtomicBoolean();
        ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor();
        watcher.scheduleWithFixedDelay(() -> {
            try {
                if (TestConnect.cluster().connectorStatus(connector).tasks().stream()
                    .anyMatch(t -> "FAILED".equals(t.state()))) {
                    sawFailed.set(true);
                }
            } catch (RuntimeException ignored) {
                // the REST call itself failed; try again
            }
        }, 0, 250, TimeUnit.MILLISECONDS);
        try {
            FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> OutboxLedger.stamped(db) >= events / 4,
                () -> "drain did not start: " + OutboxLedger.state(db));
            server.stopImmediately();
            log("PostgreSQL stopped -m immediate mid-drain; down for %s", outage);
            Thread.sleep(outage.toMillis());
            server.start();
            db.unthrottleRowUpdates("events");
            long stampedAtRestart = OutboxLedger.stamped(db);
            log("PostgreSQL started again (crash recovery done); %d of %d rows stamped: %s", stampedAtRestart, events,
                OutboxLedger.state(db));
            assertThat(stampedAtRestart).as("the outage must land mid-drain").isLessThan(events);
            FaultScenarios.logged("right after the restart",
                OutboxLedger.check(db, TestConnect.cluster().kafka().bootstrapServers(), subscriptions))
                .assertStampsBacked();

            FaultScenarios.awaitDrained(db, Duration.ofSeconds(180));
        } finally {
            watcher.shutdownNow();
        }
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 4 (PostgreSQL stopped -m immediate)",
            OutboxLedger.check(db, TestConnect.cluster().kafka().bootstrapServers(), subscriptions));
        reports.assertNothingLost();
        if (synchronousCommit.equals("on")) {
            reports.assertDuplicatesAtMost((long) subscriptions.size() * TASKS * BATCH * INFLIGHT_BATCHES,
                "every task's in-flight window per topic (committed stamps are durable)");
        }
        assertThat(OutboxLedger.poisoned(db)).isZero();
        assertThat(sawFailed).as("a task FAILED during the outage instead of backing off").isFalse();
        ConnectorStateInfo status = TestConnect.cluster().connectorStatus(connector);
        assertThat(status.tasks()).hasSize(TASKS).allSatisfy(t -> assertThat(t.state()).as(t.trace()).isEqualTo("RUNNING"));
    }
}
