package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.connector.integration.TestDatabase;
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
import org.junit.jupiter.api.Test;

/**
 * Scenario 4: PostgreSQL is stopped with {@code pg_ctl -m immediate} in the middle of a drain (every
 * session dies at once, no checkpoint) and started again a while later (crash recovery): the tasks
 * recover by themselves, without a restart through the REST API, and nothing is lost. Guards against a
 * task that fails on the outage's errors (connection refused, "the database system is starting up")
 * instead of backing off, or that never notices the server came back.
 */
class PostgresStoppedImmediatelyIT {
    private static final String CONNECTOR = "faults-pg-immediate";
    private static final int BATCH = 100;
    private static final int INFLIGHT_BATCHES = 4;
    private static final int TASKS = 2;
    private static RestartablePostgres server;

    @BeforeAll
    static void startServer() {
        server = RestartablePostgres.start("immediate");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void aDrainSurvivesPostgresStoppedImmediatelyAndStartedAgain() throws Exception {
        int events = FaultScenarios.events(5_000, 20_000);
        Duration outage = Duration.ofSeconds(FaultScenarios.FULL ? 30 : 6);
        TestDatabase db = server.createDatabase("faults_pg_immediate");
        FaultScenarios.insertEvents(db, events, 300);
        List<Subscription> subscriptions = FaultScenarios.subscriptions(CONNECTOR);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, TASKS);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.max.inflight.batches", Integer.toString(INFLIGHT_BATCHES));
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);

        // watch the task states through the whole outage: recovering "by itself" means never FAILED
        AtomicBoolean sawFailed = new AtomicBoolean();
        ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor();
        watcher.scheduleWithFixedDelay(() -> {
            try {
                if (TestConnect.cluster().connectorStatus(CONNECTOR).tasks().stream()
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
        reports.assertNothingLost().assertDuplicatesAtMost((long) subscriptions.size() * TASKS * BATCH * INFLIGHT_BATCHES,
            "every task's in-flight window per topic");
        assertThat(OutboxLedger.poisoned(db)).isZero();
        assertThat(sawFailed).as("a task FAILED during the outage instead of backing off").isFalse();
        ConnectorStateInfo status = TestConnect.cluster().connectorStatus(CONNECTOR);
        assertThat(status.tasks()).hasSize(TASKS).allSatisfy(t -> assertThat(t.state()).as(t.trace()).isEqualTo("RUNNING"));
    }
}
