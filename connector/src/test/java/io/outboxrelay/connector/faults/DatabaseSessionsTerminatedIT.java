package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Scenario 3: {@code pg_terminate_backend} on every session of the connector (pool and LISTEN, both
 * tasks), again and again, while it drains a backlog and a steady stream of new events. Each kill can
 * land in a claim (committed, result lost), in a stamp (records acknowledged, stamp lost) or in LISTEN.
 * Guards against a lost claim result stranding rows, a lost stamp dropping delivered rows, repeated
 * kills poisoning healthy rows, and the task failing instead of backing off.
 */
class DatabaseSessionsTerminatedIT {
    private static final String CONNECTOR = "faults-terminated";
    private static final int BATCH = 50;
    private static final int INFLIGHT_BATCHES = 4;
    private static final int TASKS = 2;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void sessionsTerminatedAgainAndAgainDuringADrainLoseNothing() throws Exception {
        int events = FaultScenarios.events(3_000, 20_000);
        TestDatabase db = TestPostgres.get().createDatabase("faults_terminated");
        FaultScenarios.insertEvents(db, events, 300);
        List<Subscription> subscriptions = FaultScenarios.subscriptions(CONNECTOR);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, TASKS);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.batch.max.size", Integer.toString(BATCH)); // the duplicate bound: max size x in flight
        cfg.put("outbox.max.inflight.batches", Integer.toString(INFLIGHT_BATCHES));
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);

        // a steady stream on top of the backlog keeps the relay busy for the whole killing period
        FaultScenarios.Terminations faults = FaultScenarios.terminateSessions(db, CONNECTOR,
            Duration.ofSeconds(FaultScenarios.FULL ? 40 : 12), 250);
        int kills = faults.rounds();
        assertThat(faults.sessions()).as("sessions were terminated").isGreaterThan(kills);

        FaultScenarios.awaitDrained(db, Duration.ofSeconds(120));
        String bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 3 (pg_terminate_backend x" + kills + ")",
            OutboxLedger.check(db, bootstrap, subscriptions));
        reports.assertNothingLost().assertDuplicatesAtMost((long) subscriptions.size() * TASKS * BATCH * INFLIGHT_BATCHES,
            "every task's in-flight window per topic");
        assertThat(OutboxLedger.poisoned(db)).as("healthy rows poisoned by database faults").isZero();
        ConnectorStateInfo status = TestConnect.cluster().connectorStatus(CONNECTOR);
        assertThat(status.tasks()).hasSize(TASKS).allSatisfy(t -> assertThat(t.state()).as(t.trace()).isEqualTo("RUNNING"));
        log("max attempts of a row: %d", db.queryLong("SELECT max(attempts) FROM events"));
    }
}
