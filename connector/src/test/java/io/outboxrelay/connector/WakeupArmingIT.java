package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The wake-up flag against a real PostgreSQL: writers NOTIFY only while a relay task has armed the flag,
 * and a writer that read the flag unarmed just before a task armed it cannot leave its row waiting for
 * the sweep. Every step is ordered by the test itself (open transactions, commits), never by timing.
 */
class WakeupArmingIT {
    private static TestDatabase db;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("wakeup");
        pool = db.pool("wakeup-it", 4);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    @BeforeEach
    void emptyOutbox() {
        db.execute("TRUNCATE events");
        db.execute("SELECT setval('events_wakeup', 0, true)");
    }

    private static long flag() {
        return db.queryLong("SELECT last_value FROM events_wakeup");
    }

    /** A session that LISTENs on the relay's channel, as a relay task does. */
    private static Connection listener() throws SQLException {
        Connection c = db.connect();
        try (Statement s = c.createStatement()) {
            s.execute("LISTEN outbox_events");
        }
        return c;
    }

    /** Notifications that reached {@code listener} by now; one that is still on its way (microseconds) waits. */
    private static int awaitNotifications(Connection listener, int expected) {
        int[] seen = {0};
        await().atMost(Duration.ofSeconds(5)).until(() -> (seen[0] += notifications(listener)) >= expected);
        return seen[0];
    }

    private static int notifications(Connection listener) throws SQLException {
        try (Statement s = listener.createStatement()) {
            s.execute("SELECT 1"); // a round trip delivers what arrived
        }
        PGNotification[] n = listener.unwrap(PGConnection.class).getNotifications();
        return n == null ? 0 : n.length;
    }

    /** A writer's transaction, left open after its insert. */
    private static Connection openWriter(String subject) throws SQLException {
        Connection c = db.connect();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("INSERT INTO events(type, subject) VALUES ('t.a', '" + subject + "')");
        }
        return c;
    }

    private static List<ClaimedRow> claim() throws SQLException {
        return new JdbcOutboxStore(pool, "events", "\"events\"", "wakeup-0", "1", 1, 0, 60_000, "", null)
            .claim(100).rows();
    }

    @Test
    void writersNotifyOnlyWhileTheFlagIsArmedAndTheFirstOneDisarmsIt() throws Exception {
        try (Connection listener = listener()) {
            db.insertEvent("t.a", "quiet", "{}");
            assertThat(notifications(listener)).as("nobody waits: no NOTIFY, no lock").isZero();

            new WakeupArming(pool, "events", "outbox_events").arm(false);
            assertThat(flag()).isEqualTo(1);
            db.insertEvent("t.a", "wakes", "{}");
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
            assertThat(flag()).as("the writer that notified disarmed the flag").isZero();
            db.insertEvent("t.a", "busy", "{}");
            assertThat(notifications(listener)).as("the relay is awake: no NOTIFY").isZero();
        }
    }

    @Test
    void aRepeatableReadWriterSeesAnArmingThatCameAfterItsSnapshot() throws Exception {
        try (Connection listener = listener(); Connection writer = db.connect()) {
            writer.setAutoCommit(false);
            try (Statement s = writer.createStatement()) {
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                s.execute("SELECT count(*) FROM events"); // the snapshot is taken here, before the arming
                new WakeupArming(pool, "events", "outbox_events").arm(false);
                s.execute("INSERT INTO events(type, subject) VALUES ('t.a', 'rr')");
            }
            writer.commit();
            assertThat(awaitNotifications(listener, 1)).as("the flag is read as it is now, not as the snapshot saw it")
                .isEqualTo(1);
        }
    }

    /**
     * The race the arming protocol closes. A writer inserts while the flag is down (the relay is busy),
     * so it will send no NOTIFY; the relay then runs out of rows and arms the flag; the writer commits.
     * Claiming once right after arming (the negative control) misses the row, and no NOTIFY ever comes:
     * it would wait for the sweep. The protocol claims again when a transaction in progress at the arming
     * ends, and finds it.
     */
    @Test
    void aWriterThatReadTheFlagUnarmedIsClaimedWhenItCommitsWithoutANotify() throws Exception {
        try (Connection listener = listener(); Connection racing = openWriter("raced")) {
            WakeupArming arming = new WakeupArming(pool, "events", "outbox_events");
            arming.arm(false);
            // negative control: the naive "arm, then claim once" sees nothing, and sleeps
            assertThat(claim()).isEmpty();
            assertThat(arming.waiting()).as("the racing writer was in progress at the arming").isTrue();
            assertThat(arming.someEnded()).isFalse();

            racing.commit();
            assertThat(notifications(listener)).as("it read the flag unarmed: no NOTIFY").isZero();
            assertThat(arming.someEnded()).as("its end is seen without any timing").isTrue();
            assertThat(claim()).extracting(ClaimedRow::subject).containsExactly("raced");
            assertThat(arming.waiting()).isFalse();
        }
    }

    /** The payloads of the notifications that reached {@code listener}, once {@code expected} have. */
    private static List<String> awaitPayloads(Connection listener, int expected) {
        List<String> seen = new ArrayList<>();
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            try (Statement s = listener.createStatement()) {
                s.execute("SELECT 1");
            }
            PGNotification[] n = listener.unwrap(PGConnection.class).getNotifications();
            for (int i = 0; n != null && i < n.length; i++) {
                seen.add(n[i].getParameter());
            }
            return seen.size() >= expected;
        });
        return seen;
    }

    /**
     * A task whose look finds the flag cleared without a NOTIFY (the writer rolled back) wakes every task of
     * the table: writers after the clearing one skipped their NOTIFY, and their rows may be in another
     * task's share. An ordinary arming sends nothing: the marker NOTIFY is the first to arrive.
     */
    @Test
    void anArmingThatWakesEveryTaskSendsOneNotifyAndAnOrdinaryArmingNone() throws Exception {
        try (Connection listener = listener()) {
            WakeupArming arming = new WakeupArming(pool, "events", "outbox_events");
            arming.arm(false);
            db.execute("NOTIFY outbox_events, 'marker'");
            assertThat(awaitPayloads(listener, 1)).containsExactly("marker");

            arming.arm(true);
            assertThat(awaitPayloads(listener, 1)).containsExactly("");
            assertThat(flag()).as("and the flag is set").isEqualTo(1);
        }
    }

    @Test
    void aTableFromAnOlderSchemaWithoutTheFlagNotifiesOnEveryInsert() throws Exception {
        db.execute("DROP SEQUENCE events_wakeup");
        try (Connection listener = listener()) {
            assertThat(WakeupArming.available(pool, "events")).isFalse();
            db.insertEvent("t.a", "legacy-1", "{}");
            db.insertEvent("t.a", "legacy-2", "{}");
            assertThat(awaitNotifications(listener, 2)).isEqualTo(2);
        } finally {
            db.execute("CREATE SEQUENCE events_wakeup AS smallint MINVALUE 0 MAXVALUE 1 START WITH 0 NO CYCLE;"
                + " GRANT SELECT, UPDATE ON SEQUENCE events_wakeup TO outbox_relay");
        }
        assertThat(WakeupArming.available(pool, "events")).isTrue();
    }
}
