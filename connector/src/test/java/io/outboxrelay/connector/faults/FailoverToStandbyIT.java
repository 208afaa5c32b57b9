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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scenario 9: a database failover mid-drain. A primary with a synchronous streaming standby; the connector
 * is given both hosts with {@code targetServerType=primary} (docs/failover.md). The primary dies
 * ({@code pg_ctl stop -m immediate}) and the standby is promoted: the relay reconnects to the new primary by
 * itself and every event is delivered, none lost. What the relay's own sessions commit with decides the
 * duplicates: with {@code connection.synchronous.commit=on} a stamp the relay committed was on the standby
 * first, so only rows in flight come again (within every task's in-flight window); with the default
 * {@code off} the standby may not have received the last stamps, and those rows are delivered again.
 */
class FailoverToStandbyIT {
    private static final int BATCH = 100;
    private static final int INFLIGHT_BATCHES = 4;
    private static final int TASKS = 2;
    private LocalPostgres primary;
    private LocalPostgres standby;
    private String connector;

    @BeforeEach
    void startPrimary() {
        primary = FaultScenarios.postgres("failover-primary");
    }

    @AfterEach
    void stopEverything() {
        if (connector != null) {
            TestConnect.cluster().deleteConnector(connector);
        }
        if (standby != null) {
            standby.close();
        }
        if (primary != null) {
            primary.close();
        }
    }

    @ParameterizedTest(name = "connection.synchronous.commit={0}")
    @ValueSource(strings = {"on", "off"})
    void aDrainGoesOnOnThePromotedStandbyAndLosesNothing(String synchronousCommit) {
        int events = FaultScenarios.events(4_000, 20_000);
        connector = "faults-failover-" + synchronousCommit;
        String database = "faults_failover_" + synchronousCommit;
        TestDatabase onPrimary = FaultScenarios.createDatabase(primary, database);
        standby = primary.startStandby("failover_standby",
            ChildJvm.workDir("postgres-failover_standby").resolve("data"), true);
        FaultScenarios.insertEvents(onPrimary, events, 300); // each commit waited for the standby
        onPrimary.throttleRowUpdates("events", 1_000); // ~1,000 rows/s: the failover lands mid-drain

        String bothHosts = "jdbc:postgresql://localhost:" + primary.port() + ",localhost:" + standby.port() + "/"
            + database + "?targetServerType=primary";
        TestDatabase relayView = new TestDatabase(database, bothHosts, onPrimary.user(), onPrimary.password());
        List<Subscription> subscriptions = FaultScenarios.subscriptions(connector);
        Map<String, String> cfg = FaultScenarios.relayConfig(relayView, subscriptions, TASKS);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.batch.max.size", Integer.toString(BATCH));
        cfg.put("outbox.max.inflight.batches", Integer.toString(INFLIGHT_BATCHES));
        cfg.put("connection.synchronous.commit", synchronousCommit);
        TestConnect.cluster().configureConnector(connector, cfg);

        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> OutboxLedger.stamped(onPrimary) >= events / 4,
            () -> "drain did not start: " + OutboxLedger.state(onPrimary));
        primary.stopImmediately();
        standby.promote();
        TestDatabase onNewPrimary = new TestDatabase(database, "jdbc:postgresql://localhost:" + standby.port() + "/"
            + database, onPrimary.user(), onPrimary.password());
        long stampedAtPromotion = OutboxLedger.stamped(onNewPrimary);
        log("primary stopped -m immediate, standby promoted; %d of %d rows stamped there: %s", stampedAtPromotion,
            events, OutboxLedger.state(onNewPrimary));
        assertThat(stampedAtPromotion).as("the failover must land mid-drain").isLessThan(events);
        onNewPrimary.unthrottleRowUpdates("events");

        FaultScenarios.awaitDrained(onNewPrimary, Duration.ofSeconds(180));
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 9 (failover to the standby)",
            OutboxLedger.check(onNewPrimary, TestConnect.cluster().kafka().bootstrapServers(), subscriptions));
        reports.assertNothingLost();
        if (synchronousCommit.equals("on")) {
            reports.assertDuplicatesAtMost((long) subscriptions.size() * TASKS * BATCH * INFLIGHT_BATCHES,
                "every task's in-flight window per topic (its committed stamps were on the standby)");
        }
        assertThat(OutboxLedger.poisoned(onNewPrimary)).isZero();
        assertThat(TestConnect.cluster().connectorStatus(connector).tasks()).hasSize(TASKS)
            .allSatisfy(t -> assertThat(t.state()).as(t.trace()).isEqualTo("RUNNING"));
    }
}
