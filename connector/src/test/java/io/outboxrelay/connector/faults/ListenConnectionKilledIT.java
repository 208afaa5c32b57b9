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
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scenario 6: the task's LISTEN session is killed and cannot come back (its role may no longer log
 * in, while the pool's established sessions keep working), so no NOTIFY reaches the task: events
 * committed meanwhile still arrive within the sweep interval (a quiet task's look finds the flag down,
 * or at the latest the sweep claims them). When LISTEN is allowed back it reconnects by itself.
 * Guards against a relay that only ever claims on NOTIFY and so strands every event committed while
 * its LISTEN connection is down or silently dead.
 */
class ListenConnectionKilledIT {
    private static final String CONNECTOR = "faults-listen";
    private static final long SWEEP_MS = 4_000;
    private static final String ROLE = "relay_listen_" + UUID.randomUUID().toString().substring(0, 8);
    private static TestDatabase admin;

    @BeforeAll
    static void createRole() {
        admin = TestPostgres.get().createDatabase("faults_listen");
        admin.execute("CREATE ROLE " + ROLE + " LOGIN IN ROLE outbox_relay");
    }

    @AfterAll
    static void dropRole() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
        admin.execute("ALTER ROLE " + ROLE + " LOGIN");
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(30), () -> sessions("true") == 0, () -> "relay sessions left");
        admin.execute("DROP ROLE " + ROLE);
    }

    /** Sessions of the relay's role matching a condition on pg_stat_activity. */
    private static long sessions(String condition) {
        return admin.queryLong("SELECT count(*) FROM pg_stat_activity WHERE usename = ? AND " + condition, ROLE);
    }

    private static long listenSessions() {
        return sessions("query ILIKE 'LISTEN%'");
    }

    @Test
    void eventsCommittedWhileListenIsDeadArriveByTheSweepWithinItsInterval() {
        TestDatabase db = new TestDatabase(admin.name(), admin.jdbcUrl(), ROLE, null);
        List<Subscription> subscriptions = FaultScenarios.subscriptions(CONNECTOR);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, 1);
        cfg.put("outbox.sweep.interval.ms", Long.toString(SWEEP_MS));
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
        FaultScenarios.insertEvents(admin, 200, 20);
        FaultScenarios.awaitDrained(admin, Duration.ofSeconds(60));
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(30), () -> listenSessions() == 1, () -> "no LISTEN session");
        log("first 200 events delivered through LISTEN; the role's sessions: %s", admin.query(
            "SELECT pid, state, left(query, 40) FROM pg_stat_activity WHERE usename = ?", ROLE));

        // the pool keeps its sessions; a new login of the role (the listener's reconnect) is refused
        admin.execute("ALTER ROLE " + ROLE + " NOLOGIN");
        long killed = admin.queryLong("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            + "WHERE usename = ? AND query ILIKE 'LISTEN%'", ROLE);
        assertThat(killed).isEqualTo(1);
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(10), () -> listenSessions() == 0, () -> "LISTEN still there");
        log("LISTEN session terminated; the role may not log in again");

        for (int round = 1; round <= 2; round++) {
            long before = OutboxLedger.stamped(admin);
            long start = System.nanoTime();
            FaultScenarios.insertEvents(admin, 100, 20); // its NOTIFY reaches nobody
            FaultScenarios.awaitOrDescribe(Duration.ofMillis(SWEEP_MS + 8_000),
                () -> OutboxLedger.stamped(admin) == before + 100,
                () -> "not swept within the interval: " + OutboxLedger.state(admin));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            log("round %d: 100 events committed with LISTEN dead arrived after %d ms (sweep interval %d ms)", round,
                tookMs, SWEEP_MS);
            assertThat(listenSessions()).as("delivered without a LISTEN session: by the sweep").isZero();
            assertThat(tookMs).isLessThanOrEqualTo(SWEEP_MS + 5_000);
        }

        admin.execute("ALTER ROLE " + ROLE + " LOGIN");
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(45), () -> listenSessions() == 1,
            () -> "LISTEN did not come back after the role could log in again");
        log("LISTEN is back");
        FaultScenarios.insertEvents(admin, 100, 20);
        FaultScenarios.awaitDrained(admin, Duration.ofSeconds(30));

        String bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        FaultScenarios.logged("scenario 6 (LISTEN killed)", OutboxLedger.check(admin, bootstrap, subscriptions))
            .assertNothingLost().assertNoDuplicates().assertPerSubjectOrder();
        assertThat(TestConnect.cluster().connectorStatus(CONNECTOR).tasks().get(0).state()).isEqualTo("RUNNING");
    }
}
