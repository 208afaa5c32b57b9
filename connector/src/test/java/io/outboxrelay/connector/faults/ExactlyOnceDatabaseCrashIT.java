package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.faults.TopicContents.Isolation;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.testsupport.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Found by review: on an exactly-once worker a plain PostgreSQL crash (no failover) duplicated rows when the
 * connector's commits did not wait for the WAL flush ({@code connection.synchronous.commit=off}, then the default).
 * The task takes a stamp for committed once the server says so and its next offsets stop naming the row; the crash
 * undid the stamp, and the row was claimed and produced again, a second copy a {@code read_committed} consumer reads.
 * Asked for exactly-once, the connector's commits now wait for the flush unless the key is set.
 *
 * <p>The server here flushes asynchronous commits only when it must: its WAL writer wakes every 10 s, with room for
 * all the drain's WAL in its buffers, and no autovacuum commits anything in between. So every stamp an
 * asynchronous commit made in the last seconds before {@code pg_ctl -m immediate} is lost, and the negative control
 * (the key set to {@code off}) shows the duplicates every time, not by luck.
 */
class ExactlyOnceDatabaseCrashIT {
    private static final int BATCH = 50;
    private static final Duration OUTAGE = Duration.ofSeconds(3);
    private static final String WARNING = "runs in Connect's transactions (exactly-once) with"
        + " connection.synchronous.commit=off";

    private static LocalPostgres server;
    private static FaultWorker eosWorker;
    private static String bootstrap;

    @BeforeAll
    static void start() {
        server = FaultScenarios.postgres("eos-crash", Map.of("wal_writer_delay", "10s",
            "wal_writer_flush_after", "1GB", "wal_buffers", "64MB", "autovacuum", "off"));
        bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        eosWorker = new FaultWorker("eos-crash", bootstrap, Map.of("exactly.once.source.support", "enabled"),
            List.of()).start();
    }

    @AfterAll
    static void stop() {
        if (eosWorker != null) {
            eosWorker.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void askedForExactlyOnceTheConnectorsCommitsSurviveADatabaseCrashAndNoEventComesTwice() throws Exception {
        int logBefore = eosWorker.logText().length();
        DeliveryChecker.Reports reports = crashMidDrain("eos-crash-default", Map.of());
        reports.assertNothingLost().assertNoDuplicates();
        assertThat(eosWorker.logText().substring(logBefore)).doesNotContain(WARNING);
    }

    /** The negative control: the same crash with the connector's commits asynchronous duplicates rows, and says so. */
    @Test
    void withAsynchronousCommitsTheSameCrashDuplicatesRowsAndTheTaskWarnsOfIt() throws Exception {
        int logBefore = eosWorker.logText().length();
        DeliveryChecker.Reports reports = crashMidDrain("eos-crash-async",
            Map.of("connection.synchronous.commit", "off"));
        reports.assertNothingLost();
        assertThat(reports.duplicates()).as("stamps the crash undid were produced again").isPositive();
        assertThat(eosWorker.logText().substring(logBefore)).contains(WARNING);
    }

    /** A backlog drained on the exactly-once worker, the server stopped -m immediate mid-drain and started again. */
    private DeliveryChecker.Reports crashMidDrain(String connector, Map<String, String> extra) throws Exception {
        int events = FaultScenarios.events(2_000, 20_000);
        TestDatabase db = FaultScenarios.createDatabase(server, connector.replace('-', '_'));
        FaultScenarios.insertEvents(db, events, 200);
        db.throttleRowUpdates("events", 1_000); // ~1,000 rows/s: the crash lands mid-drain
        List<Subscription> subscriptions = FaultScenarios.subscriptions(connector);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, 1);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.batch.max.size", Integer.toString(BATCH));
        cfg.put("exactly.once.support", "required");
        cfg.putAll(extra);
        eosWorker.configureConnector(connector, cfg);

        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> OutboxLedger.stamped(db) >= events / 4,
            () -> "drain did not start: " + OutboxLedger.state(db) + "\n" + eosWorker.statusJson(connector));
        server.stopImmediately();
        log("%s: PostgreSQL stopped -m immediate mid-drain; down for %s", connector, OUTAGE);
        Thread.sleep(OUTAGE.toMillis()); // the outage itself, not a wait for a condition
        server.start();
        long stampedAtRestart = OutboxLedger.stamped(db);
        log("%s: PostgreSQL started again, %d of %d rows stamped: %s", connector, stampedAtRestart, events,
            OutboxLedger.state(db));
        assertThat(stampedAtRestart).as("the crash must land mid-drain").isLessThan(events);
        db.unthrottleRowUpdates("events");
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(180));

        DeliveryChecker.Reports reports = FaultScenarios.logged(connector + ": read_committed",
            OutboxLedger.check(db, bootstrap, subscriptions, Isolation.READ_COMMITTED));
        assertThat(OutboxLedger.poisoned(db)).isZero();
        assertThat(eosWorker.tasksRunning(connector, 1)).as(eosWorker.statusJson(connector)).isTrue();
        eosWorker.deleteConnector(connector);
        return reports;
    }
}
