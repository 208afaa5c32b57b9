package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.CommittedOffsets;
import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scenario 8: the database goes away after the broker acknowledged a row's records and before the
 * row's stamp commits. The window is hit deterministically: a test-only trigger makes the stamp (the
 * update that sets {@code fanned_out_at}) wait on an advisory lock the test holds, so the test sees
 * the records on the topic and the stamp in progress, then takes the database away. Guards against a
 * stamp failure dropping acknowledged rows (they would stay leased and unstamped, or be stamped
 * without a record) and against a restarted task forgetting them: the row must end stamped and on the
 * topic; when the task that saw the ack is gone, it is delivered again as soon as the database is back
 * (the new task takes back its predecessor's leases), not only once the lease has run out.
 */
class DatabaseGoneBetweenAckAndStampIT {
    private static final int ROWS = 20;
    private static final long HOLD_KEY = 4242;
    private static LocalPostgres ownServer;
    private String connector;

    @BeforeAll
    static void startServer() {
        ownServer = FaultScenarios.postgres("ack-stamp");
    }

    @AfterAll
    static void stopServer() {
        if (ownServer != null) {
            ownServer.close();
        }
    }

    @AfterEach
    void deleteConnector() {
        if (connector != null) {
            TestConnect.cluster().deleteConnector(connector);
        }
    }

    @Test
    void aStampWhoseSessionIsTerminatedAfterTheAckIsRetriedAndNothingIsLost() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("faults_ack_stamp_terminated");
        Window window = openWindow(db, "faults-ack-stamp-terminated");
        try {
            for (int i = 0; i < 3; i++) { // the stamp is retried; kill it again each time it waits
                long killed = db.queryLong("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    + "WHERE application_name LIKE ? AND datname = current_database()", "outbox-relay:" + connector + "%");
                log("terminated %d sessions of %s while its stamp waited (round %d)", killed, connector, i + 1);
                assertThat(OutboxLedger.stamped(db)).isZero();
                awaitStampWaiting(db);
            }
        } finally {
            window.lock.close(); // ending the lock session lets the stamp through
        }
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(60));
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 8a (stamp session terminated after ack)",
            OutboxLedger.check(db, window.bootstrap, window.subscriptions));
        reports.assertNothingLost().assertDuplicatesAtMost((long) ROWS * window.subscriptions.size(), "the held rows");
        log("scenario 8a: %d duplicates (0 means the task kept the acknowledged rows and stamped them once the"
            + " database was back)", reports.duplicates());
    }

    @Test
    void aServerStoppedImmediatelyAfterTheAckLeavesTheRowsToBeStampedWhenItIsBack() throws Exception {
        TestDatabase db = FaultScenarios.createDatabase(ownServer, "faults_ack_stamp_crash");
        Window window = openWindow(db, "faults-ack-stamp-crash");
        ownServer.stopImmediately(); // the stamp's transaction dies with the server; so does the lock session
        try {
            window.lock.close();
            log("PostgreSQL stopped -m immediate while the stamp waited; rows on the topic: %d",
                TestContents.count(window));
            Thread.sleep(3_000);
        } finally {
            ownServer.start();
        }
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(60));
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 8b (server stopped after ack)",
            OutboxLedger.check(db, window.bootstrap, window.subscriptions));
        reports.assertNothingLost().assertDuplicatesAtMost((long) ROWS * window.subscriptions.size(), "the held rows");
        assertThat(TestConnect.cluster().connectorStatus(connector).tasks().get(0).state()).isEqualTo("RUNNING");
    }

    @Test
    void rowsAckedButNeverStampedAreDeliveredAgainByATaskThatRestartedWhileTheServerWasDown() throws Exception {
        TestDatabase db = FaultScenarios.createDatabase(ownServer, "faults_ack_stamp_restart");
        // the rows must come back because the new task takes back its predecessor's leases,
        // not because the lease ran out
        long leaseMs = 60_000; // the default
        // Under errors.tolerance=none the committed source offsets can name the acknowledged rows, and then the
        // new task stamps them without producing them again (SlotReconciler): whether they do depends on whether
        // the worker committed offsets after the old task's poll returned, a matter of timing. Offsets that name
        // no rows (errors.tolerance=all) leave the database as the only witness, the case this test is about.
        Window window = openWindow(db, "faults-ack-stamp-restart", leaseMs, Map.of("errors.tolerance", "all"));
        long leasesEndMs = leasesEndMs(db);
        ownServer.stopImmediately();
        window.lock.close();
        // the task that saw the acks goes away while the database is down: only the database can tell
        // the new one what is left, and it says "leased, not stamped"
        try (LogCapture logs = LogCapture.start()) {
            restartTheTaskAndAwaitIt(logs);
            assertThat(logs.text()).contains("Could not stamp the acknowledged rows on stop");
        } finally {
            ownServer.start();
        }
        long back = System.nanoTime();
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(150));
        long tookMs = (System.nanoTime() - back) / 1_000_000;
        log("scenario 8c: the held rows were stamped %d ms after the database came back (lease %d ms)", tookMs, leaseMs);
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 8c (task restarted while the server was down)",
            OutboxLedger.check(db, window.bootstrap, window.subscriptions));
        reports.assertNothingLost();
        for (DeliveryChecker.Report r : reports.reports()) {
            assertThat(r.duplicated()).as("every held row delivered again to " + r.topic()).hasSize(r.committed());
        }
        assertThat(db.queryLong("SELECT min(attempts) FROM events")).isEqualTo(2);
        assertThat(OutboxLedger.recovered(db)).as("stamped from source offsets").isZero();
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at >= to_timestamp(? / 1000.0)",
            leasesEndMs)).as("the restarted task took back its predecessor's leases once the database was back,"
            + " instead of waiting for them to expire").isZero();
        assertThat(tookMs).isLessThan(leaseMs / 4);
    }

    /**
     * The same window under the default {@code errors.tolerance=none}, once the worker committed the source offsets
     * of the acknowledged records (the old task's poll returns when its stamp fails with the server gone): they name
     * every held row, and the task restarted while the server is down stamps them once it is back without producing
     * them again. The control is the scenario above, whose offsets name nothing: there every held row is produced
     * again.
     */
    @Test
    void rowsTheCommittedOffsetsNameAreStampedByTheRestartedTaskWithoutBeingProducedAgain() throws Exception {
        TestDatabase db = FaultScenarios.createDatabase(ownServer, "faults_ack_stamp_named");
        long leaseMs = 60_000; // the default: stamped because the offsets name the rows, not because a lease ran out
        Window window = openWindow(db, "faults-ack-stamp-named", leaseMs, Map.of());
        ownServer.stopImmediately();
        window.lock.close();
        long tookMs;
        try (LogCapture logs = LogCapture.start()) {
            try {
                FaultScenarios.awaitOrDescribe(Duration.ofSeconds(30), () -> rowsNamed(connector) == ROWS,
                    () -> "the committed offsets do not name the " + ROWS + " held rows: "
                        + TestConnect.cluster().connectorOffsets(connector).offsets());
                restartTheTaskAndAwaitIt(logs);
            } finally {
                ownServer.start();
            }
            long back = System.nanoTime();
            FaultScenarios.awaitDrained(db, Duration.ofSeconds(150));
            tookMs = (System.nanoTime() - back) / 1_000_000;
        }
        log("scenario 8d: the held rows, named by committed offsets, were stamped %d ms after the database came back",
            tookMs);
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 8d (offsets name the acknowledged rows)",
            OutboxLedger.check(db, window.bootstrap, window.subscriptions));
        reports.assertNothingLost();
        assertThat(reports.duplicates()).as("no held row produced again").isZero();
        assertThat(OutboxLedger.recovered(db)).as("stamped from source offsets").isEqualTo(ROWS);
        assertThat(db.queryLong("SELECT max(attempts) FROM events")).isEqualTo(1);
        assertThat(tookMs).isLessThan(leaseMs / 4);
    }

    /** Restarts task 0 and waits until it stopped and started again (while the database is down, here). */
    private void restartTheTaskAndAwaitIt(LogCapture logs) {
        String owner = connector + "-0";
        TestConnect.cluster().restartTask(connector, 0);
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120),
            () -> logs.text().contains("Outbox relay task " + owner + " stopped")
                && logs.text().contains("Outbox relay task " + owner + " started"),
            () -> "the task did not stop and start again while the database was down; relay log:\n"
                + relayLines(logs.text()));
    }

    /** When the last lease of the held rows runs out, in ms since the epoch, by the database's clock. */
    private static long leasesEndMs(TestDatabase db) {
        return db.queryLong("SELECT (extract(epoch FROM max(lease_until)) * 1000)::bigint FROM events");
    }

    /** Rows the connector's committed source offsets name, over all its slots. */
    private static int rowsNamed(String connector) {
        return TestConnect.cluster().connectorOffsets(connector).offsets().stream()
            .mapToInt(o -> CommittedOffsets.rowsNamed(o.offset())).sum();
    }

    /** The held window: records acknowledged, stamp waiting on the test's advisory lock. */
    private record Window(Connection lock, String bootstrap, List<Subscription> subscriptions) {
    }

    private Window openWindow(TestDatabase db, String name) throws SQLException {
        return openWindow(db, name, 30_000, Map.of());
    }

    private Window openWindow(TestDatabase db, String name, long leaseMs, Map<String, String> extra)
        throws SQLException {
        db.execute("""
            CREATE FUNCTION faults_hold_stamp() RETURNS trigger LANGUAGE plpgsql AS $fn$
            BEGIN
              PERFORM pg_advisory_xact_lock_shared(%d);
              RETURN NEW;
            END;
            $fn$;
            CREATE TRIGGER faults_hold_stamp BEFORE UPDATE ON events FOR EACH ROW
              WHEN (OLD.fanned_out_at IS NULL AND NEW.fanned_out_at IS NOT NULL)
              EXECUTE FUNCTION faults_hold_stamp();
            """.formatted(HOLD_KEY));
        Connection lock = db.connect();
        try (Statement st = lock.createStatement()) {
            st.execute("SELECT pg_advisory_lock(" + HOLD_KEY + ")");
        }
        connector = name;
        List<Subscription> subscriptions = FaultScenarios.subscriptions(name);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, 1);
        cfg.put("outbox.batch.size", Integer.toString(ROWS));
        cfg.put("outbox.batch.max.size", Integer.toString(ROWS));
        cfg.put("outbox.lease.ms", Long.toString(leaseMs));
        cfg.putAll(extra);
        TestConnect.cluster().configureConnector(name, cfg);
        FaultScenarios.insertEvents(db, ROWS, 5);
        String bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        Window window = new Window(lock, bootstrap, subscriptions);
        // acknowledged: every record of every held row is on its topic
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(60),
            () -> TopicContents.count(bootstrap, subscriptions.get(0).topic()) == ROWS
                && TopicContents.count(bootstrap, subscriptions.get(1).topic()) == ROWS / 2,
            () -> "records not acknowledged: " + OutboxLedger.state(db));
        awaitStampWaiting(db);
        assertThat(OutboxLedger.stamped(db)).as("acknowledged, not yet stamped").isZero();
        log("%s: %d rows acknowledged, their stamp waits: %s", name, ROWS, OutboxLedger.state(db));
        return window;
    }

    /** A session of the connector waits on the advisory lock inside the stamp. */
    private void awaitStampWaiting(TestDatabase db) {
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(30), () -> db.queryLong(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' "
                    + "AND application_name LIKE ? AND datname = current_database()", "outbox-relay:" + connector + "%") == 1,
            () -> "the stamp is not waiting: " + OutboxLedger.state(db));
    }

    private static String relayLines(String log) {
        return log.lines().filter(l -> l.contains("io.outboxrelay") || l.contains("WorkerTask") || l.contains("Herder"))
            .collect(java.util.stream.Collectors.joining("\n"));
    }

    /** Records on the held window's topics. */
    private static final class TestContents {
        static long count(Window w) {
            return w.subscriptions.stream().mapToLong(s -> TopicContents.count(w.bootstrap, s.topic())).sum();
        }
    }
}
