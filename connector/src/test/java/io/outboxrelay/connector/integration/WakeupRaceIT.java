package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The wake-up on a real worker: writers NOTIFY only while the relay waits (the table's flag is armed),
 * and a write that races the relay going back to sleep is relayed when it commits, without a NOTIFY of
 * its own and without the sweep (set to ten minutes here, so it cannot be what delivers the row).
 */
class WakeupRaceIT {
    private static final String CONNECTOR = "wakeup-race";

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    private static Connection openWriter(TestDatabase db, String subject) throws SQLException {
        Connection c = db.connect();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("INSERT INTO events(type, subject) VALUES ('order.created', '" + subject + "')");
        }
        return c;
    }

    private static boolean stamped(TestDatabase db, String subject) {
        return db.queryLong("SELECT count(*) FROM events WHERE subject = ? AND fanned_out_at IS NOT NULL", subject) == 1;
    }

    /**
     * A new database and the connector on it with {@code tasks} tasks and a ten-minute sweep, once a task found
     * nothing to claim and armed the flag: it waits for a NOTIFY, and looks (arms again and claims) every 250 ms.
     * A task still active would claim the test's rows on its pace instead, which the tests accept: what they check
     * is that no row waits for the sweep.
     */
    private static TestDatabase armedRelay(String database, String topic, int tasks) {
        TestDatabase db = TestPostgres.get().createDatabase(database);
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", tasks);
        cfg.put("subscription.orders.topic", topic);
        cfg.put("outbox.sweep.interval.ms", "600000");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT last_value FROM events_wakeup") == 1
            && db.queryLong("SELECT count(DISTINCT application_name) FROM pg_stat_activity WHERE datname = current_database()"
                + " AND starts_with(application_name, 'outbox-relay:')") >= tasks);
        return db;
    }

    @Test
    void aWriteThatRacesTheRelayGoingToSleepIsRelayedWhenItCommits() throws Exception {
        TestDatabase db = armedRelay("wakeup_race", "wakeup-race-orders", 1);

        try (Connection first = openWriter(db, "first")) {
            assertThat(db.queryLong("SELECT last_value FROM events_wakeup"))
                .as("the first writer found the flag armed, cleared it and will NOTIFY at commit").isZero();
            try (Connection raced = openWriter(db, "raced")) {
                // this writer read the flag cleared: it sends no NOTIFY. The relay, woken by the first one,
                // claims and delivers 'first', runs out of rows and arms the flag while 'raced' is in progress
                first.commit();
                await().atMost(Duration.ofSeconds(30)).until(() -> stamped(db, "first"));
                await().atMost(Duration.ofSeconds(30))
                    .until(() -> db.queryLong("SELECT last_value FROM events_wakeup") == 1);
                assertThat(stamped(db, "raced")).isFalse();
                raced.commit();
            }
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> stamped(db, "raced"));
        assertThat(TestConnect.consume(2, Duration.ofSeconds(30), "wakeup-race-orders"))
            .extracting(TestConnect.Received::key).containsExactly("first", "raced");
    }

    /**
     * Two tasks waiting with the flag armed. A writer takes the flag down and rolls back (no NOTIFY); a second
     * writer reads it down and commits rows in both tasks' shares (no NOTIFY either); before it commits, the flag is
     * armed again, as another claimer does after a claim of its own. The four steps go to the server in one round
     * trip, so the flag is down for well under a millisecond: a task that read the flag at its looks would find it
     * armed and take that for "nothing happened" (the rows would wait for the sweep, ten minutes here). Each task's
     * look claims instead, and both shares are relayed.
     */
    @Test
    void aClearHiddenByAnotherArmingLeavesNoRowToTheSweep() throws Exception {
        TestDatabase db = armedRelay("wakeup_hidden", "wakeup-hidden-orders", 2);
        long clearsBefore = db.queryLong("SELECT COALESCE(pg_sequence_last_value('events_wakeup_clears'), 0)");

        List<String> subjects = IntStream.range(0, 8).mapToObj(i -> "after-" + i).toList();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("BEGIN; INSERT INTO events(type, subject) VALUES ('order.created', 'rolled-back'); ROLLBACK;"
                + " BEGIN; INSERT INTO events(type, subject) SELECT 'order.created', 'after-' || i"
                + " FROM generate_series(0, " + (subjects.size() - 1) + ") i;" // one statement: one read of the flag
                + " SELECT setval('events_wakeup', 1, true); COMMIT"); // another claimer's arming
        }
        assertThat(db.queryLong("SELECT COALESCE(pg_sequence_last_value('events_wakeup_clears'), 0)")).as("only the rolled-back writer"
            + " cleared the flag: the second one read it down").isEqualTo(clearsBefore + 1);
        assertThat(db.queryLong("SELECT last_value FROM events_wakeup")).isOne();
        assertThat(db.queryLong("SELECT count(DISTINCT (hashtext(subject)::bigint + 2147483648) * 2 / 4294967296) FROM events"
            + " WHERE subject LIKE 'after-%'")).as("the rows fall in both tasks' shares (the claim's hash)").isEqualTo(2);
        await().atMost(Duration.ofSeconds(10)).until(() ->
            db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == subjects.size());
        assertThat(TestConnect.consume(subjects.size(), Duration.ofSeconds(30), "wakeup-hidden-orders"))
            .extracting(TestConnect.Received::key).containsExactlyInAnyOrderElementsOf(subjects);
    }

    /**
     * A task that keeps finding rows turns its LISTEN off (PostgreSQL would wake its session for every NOTIFY of the
     * database: the write receipts of each stamp above all), and back on before it arms the flag once the rows stop:
     * the next row is relayed on its writer's NOTIFY, not by the sweep (ten minutes here).
     */
    @Test
    void aBusyTaskStopsListeningAndListensAgainBeforeItWaitsForANotify() throws Exception {
        TestDatabase db = armedRelay("wakeup_deaf", "wakeup-deaf-orders", 1);
        String listenSessions = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            + " AND query LIKE ?";
        assertThat(db.queryLong(listenSessions, "LISTEN %")).isOne();

        ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger written = new AtomicInteger();
        try {
            writer.scheduleAtFixedRate(() -> db.insertEvent("order.created", "busy-" + written.getAndIncrement(), "{}"),
                0, 20, TimeUnit.MILLISECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong(listenSessions, "UNLISTEN %") == 1);
        } finally {
            writer.shutdownNow();
            assertThat(writer.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        int busy = written.get();
        await().atMost(Duration.ofSeconds(30))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == busy);
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT last_value FROM events_wakeup") == 1);
        assertThat(db.queryLong(listenSessions, "UNLISTEN %")).as("armed: LISTEN is not off").isZero();
        double heard = RelayMetricsAndRetentionIT.metric(CONNECTOR, "notify-wakeups-total");

        db.insertEvent("order.created", "after-the-busy-spell", "{}");
        await().atMost(Duration.ofSeconds(10)).until(() -> stamped(db, "after-the-busy-spell"));
        // a task armed while deaf would still claim the row, at its next look (250 ms), but no NOTIFY would wake it
        assertThat(RelayMetricsAndRetentionIT.metric(CONNECTOR, "notify-wakeups-total"))
            .as("woken by the writer's NOTIFY, not by a look").isGreaterThan(heard);
        assertThat(TestConnect.consume(busy + 1, Duration.ofSeconds(30), "wakeup-deaf-orders"))
            .extracting(TestConnect.Received::key).contains("after-the-busy-spell");
    }
}
