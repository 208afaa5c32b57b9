package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.PostgresListener;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.PostgresServer;
import io.outboxrelay.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A full NOTIFY queue on a real PostgreSQL 17 whose queue is made small ({@code max_notify_queue_pages}):
 * a session that LISTENs and then stays in a transaction stops the queue from draining, and every commit
 * that notifies fails, also after that session has ended, until the queue's tail is moved. The stamp,
 * which carries the write receipts, still stamps the acknowledged rows (without their receipts); a writer
 * that finds the wake-up flag armed leaves its NOTIFY out and commits; and once the session has ended, both
 * notify again. Each test fills the queue and leaves it with room.
 */
class NotifyQueueFullIT {
    private static LocalPostgres server;
    private static TestDatabase db;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        server = new PostgresBuilder().setting("max_notify_queue_pages", "64").start();
        db = PostgresServer.of(server).createDatabase("queuefull", "");
        pool = db.pool("queue-full-it", 4);
    }

    @BeforeEach
    void emptyOutbox() {
        db.execute("TRUNCATE events RESTART IDENTITY");
    }

    @AfterAll
    static void stop() {
        pool.close();
        server.close();
    }

    @Test
    void aFullNotifyQueueStampsTheRowsWithoutTheirReceiptsAndTheRelayMakesRoomOnceItCan() throws Exception {
        db.insertEvents(4, 4, "t.a");
        JdbcOutboxStore store = store("queue-0");
        List<OutboxStore.Stamp> stamps = stampsFor(store.claim(3).rows());
        assertThat(stamps).hasSize(3);

        try (Connection receipts = db.connect(); Connection stuck = db.connect(); LogCapture logs = LogCapture.start()) {
            listen(receipts, "outbox_events_fanned");
            holdTheQueueBack(stuck);
            fillTheQueue();

            // the control: the stamp statement with the rows' receipts fails at commit and stamps nothing
            Object[] chunks = JdbcOutboxStore.receiptChunks(stamps.stream().map(OutboxStore.Stamp::id).toList()).toArray();
            assertThatThrownBy(() -> store.run(new OutboxStore.Pass(stamps, 0), chunks))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("54000"));
            assertThat(fanned()).isZero();

            assertThat(store.stamp(stamps)).isEqualTo(3);
            assertThat(fanned()).isEqualTo(3);
            assertThat(logs.text()).contains("NOTIFY queue is full", "stamped 3 row(s) without their write receipts",
                "pg_notification_queue_usage()");

            letTheQueueGo(stuck);
            assertThat(aNotifyCommits()).as("PostgreSQL leaves the queue full until its tail is moved").isFalse();

            List<OutboxStore.Stamp> next = stampsFor(store.claim(10).rows());
            assertThat(next).hasSize(1);
            assertThat(store.stamp(next)).isEqualTo(1);
            assertThat(logs.text()).contains("Write receipts are sent again");
            List<String> received = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                received.addAll(JdbcOutboxStoreIT.notifications(receipts));
                return received.contains(next.get(0).id());
            });
            assertThat(received).as("the rows stamped while the queue was full got no receipt")
                .containsExactly(next.get(0).id());
            assertThat(aNotifyCommits()).as("the application's notifying commits go through again").isTrue();
        }
    }

    /**
     * While the queue is over half full, a writer that finds the flag armed takes it down and counts the clear
     * without a NOTIFY (migration V4's trigger), so its commit goes through; a waiting task's next look claims its
     * row. The control: a commit that does NOTIFY fails with the queue in this state.
     */
    @Test
    void whileTheQueueIsFullAWriterThatFindsTheFlagArmedCommitsWithoutANotify() throws Exception {
        WakeupFlag wakeup = WakeupFlag.of(pool, "events");
        wakeup.arm();
        try (Connection wakes = db.connect(); Connection stuck = db.connect(); Connection writer = db.connect()) {
            listen(wakes, "outbox_events");
            holdTheQueueBack(stuck);
            fillTheQueue();
            assertThat(aNotifyCommits()).as("the control: a NOTIFY cannot commit now").isFalse();

            insert(writer);
            assertThat(db.queryLong("SELECT count(*) FROM events WHERE type = 'w.full'")).isEqualTo(1);
            assertThat(flag()).as("taken down").isZero();

            letTheQueueGo(stuck);
            db.execute("SELECT pg_notification_queue_usage()"); // moves the tail, as the relay's own statements do
            wakeup.arm();
            insert(writer);
            await().atMost(Duration.ofSeconds(10)).until(() -> JdbcOutboxStoreIT.notifications(wakes).contains(""));
            assertThat(flag()).isZero();
        }
    }

    /**
     * A LISTEN thread's echo (common's PostgresListener) is a NOTIFY too: while the queue is over half full it is not
     * sent, as a writer's trigger sends none, and the session still counts as hearing. Without that guard the echo
     * goes into the queue and arrives (the stuck session holds only the tail). The control: once the queue has room, a
     * listener's echo is sent and arrives.
     */
    @Test
    void whileTheQueueIsOverHalfFullNoEchoIsSentAndTheSessionStillCountsAsHearing() throws Exception {
        ConnectionSettings settings = new ConnectionSettings(db.jdbcUrl(), db.user(), db.password(), null, 30_000,
            60_000, 60_000, "off", "echo-queue");
        try (Connection stuck = db.connect();
             PostgresListener listener = listening(settings, "echo_queue")) {
            holdTheQueueBack(stuck);
            fillTheQueueOverHalf();
            listener.checkAlive();
            await().during(Duration.ofMillis(PostgresListener.PROBE_TIMEOUT_MS + 1_000))
                .atMost(Duration.ofMillis(PostgresListener.PROBE_TIMEOUT_MS + 6_000))
                .until(() -> listener.echoes() == 0 && !listener.hearsNothing());
            letTheQueueGo(stuck);
        }
        db.execute("SELECT pg_notification_queue_usage()");
        try (PostgresListener control = listening(settings, "echo_queue")) {
            control.checkAlive();
            await().atMost(Duration.ofSeconds(10)).until(() -> control.echoes() == 1);
        }
    }

    /** A listener on {@code channel} with its echo sent from the pool, started and listening. */
    private static PostgresListener listening(ConnectionSettings settings, String channel) {
        AtomicInteger opened = new AtomicInteger();
        PostgresListener listener = new PostgresListener(settings, channel, () -> { }, opened::incrementAndGet,
            "echo-queue", pool);
        listener.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> opened.get() == 1);
        return listener;
    }

    /** Notifies large payloads until the queue is over half full, and not full. */
    private static void fillTheQueueOverHalf() throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            while (db.queryLong("SELECT (pg_notification_queue_usage() * 100)::bigint") < 60) {
                st.execute("SELECT pg_notify('filler', repeat('x', 7900))");
            }
        }
        assertThat(aNotifyCommits()).as("not full").isTrue();
    }

    private static long flag() {
        return db.queryLong("SELECT pg_sequence_last_value('events_wakeup')");
    }

    private static void insert(Connection writer) throws SQLException {
        try (Statement st = writer.createStatement()) {
            st.execute("INSERT INTO events(type, subject, payload) VALUES ('w.full', 's', '{}')");
        }
    }

    /** A 54000 that is not the queue's (here a trigger's) still fails the stamp, as any error a retry cannot fix. */
    @Test
    void anotherProgramLimitErrorStillFailsTheStampAndStampsNothing() throws Exception {
        db.insertEvents(2, 2, "t.a");
        JdbcOutboxStore store = store("queue-1");
        List<OutboxStore.Stamp> stamps = stampsFor(store.claim(10).rows());
        db.execute("CREATE FUNCTION too_big() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " RAISE EXCEPTION 'row too big' USING ERRCODE = '54000'; END $$");
        db.execute("CREATE TRIGGER too_big BEFORE UPDATE OF fanned_out_at ON events FOR EACH ROW EXECUTE FUNCTION too_big()");
        try {
            assertThatThrownBy(() -> store.stamp(stamps)).isInstanceOfSatisfying(SQLException.class, e -> {
                assertThat(e.getSQLState()).isEqualTo("54000");
                assertThat(e.getMessage()).contains("row too big");
            });
            assertThat(fanned()).isZero();
        } finally {
            db.execute("DROP TRIGGER too_big ON events");
            db.execute("DROP FUNCTION too_big()");
        }
    }

    /** {@code stuck} LISTENs, then stays in a transaction: it reads no notification until that ends. */
    private static void holdTheQueueBack(Connection stuck) throws SQLException {
        listen(stuck, "filler"); // a listener of the channel being filled is one PostgreSQL must wait for
        stuck.setAutoCommit(false);
        try (Statement st = stuck.createStatement()) {
            st.execute("SELECT 1");
        }
    }

    /** Ends {@code stuck}'s transaction; its next statement's answer comes after it read the queue to its head. */
    private static void letTheQueueGo(Connection stuck) throws SQLException {
        stuck.rollback();
        stuck.setAutoCommit(true);
        try (Statement st = stuck.createStatement()) {
            st.execute("SELECT 1");
        }
    }

    /** Notifies large payloads until a commit fails because the queue is full. */
    private static void fillTheQueue() throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            for (int i = 0; i < 10_000; i++) {
                try {
                    st.execute("SELECT pg_notify('filler', repeat('x', 7900))");
                } catch (SQLException e) {
                    assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("54000");
                    return;
                }
            }
        }
        throw new AssertionError("the NOTIFY queue never filled");
    }

    private static boolean aNotifyCommits() {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("SELECT pg_notify('filler', '')");
            return true;
        } catch (SQLException e) {
            assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("54000");
            return false;
        }
    }

    /** A task's store on the table, with write receipts on. */
    private static JdbcOutboxStore store(String task) {
        return new JdbcOutboxStore(pool, "events", "\"events\"", task, "0001", 1, 0, 60_000, "outbox_events_fanned", null);
    }

    private static List<OutboxStore.Stamp> stampsFor(List<ClaimedRow> rows) {
        return rows.stream().map(r -> new OutboxStore.Stamp(r.seq(), "{}", r.id())).toList();
    }

    private static long fanned() {
        return db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL");
    }

    private static void listen(Connection c, String channel) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("LISTEN " + channel);
        }
    }
}
