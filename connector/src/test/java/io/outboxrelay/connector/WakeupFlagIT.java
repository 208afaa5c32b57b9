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
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The wake-up flag against a real PostgreSQL (docs/wakeup.md): writers NOTIFY only while a relay task has
 * armed the flag, every clear moves the count a waiting task looks at, and a writer that read the flag down
 * just before a task armed it cannot leave its row waiting for the sweep. Every step is ordered by the test
 * itself (open transactions, commits), never by timing.
 */
class WakeupFlagIT {
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
        db.execute("SELECT setval('events_wakeup_clears', 1, false)");
    }

    private static long flag() {
        return db.queryLong("SELECT last_value FROM events_wakeup");
    }

    /** The count of the flag's clears as a look reads it (0 before the first). */
    private static long clears() {
        return db.queryLong("SELECT COALESCE(pg_sequence_last_value('events_wakeup_clears'), 0)");
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

    private static JdbcOutboxStore store() {
        return new JdbcOutboxStore(pool, "events", "\"events\"", "wakeup-0", "1", 1, 0, 60_000, "", null);
    }

    private static WakeupFlag wakeupFlag() throws SQLException {
        return WakeupFlag.of(pool, "events");
    }

    @Test
    void writersNotifyOnlyWhileTheFlagIsArmedAndTheFirstOneDisarmsItCountingTheClear() throws Exception {
        try (Connection listener = listener()) {
            db.insertEvent("t.a", "quiet", "{}");
            assertThat(notifications(listener)).as("nobody waits: no NOTIFY, no lock").isZero();

            WakeupFlag wakeup = wakeupFlag();
            long token = wakeup.arm();
            assertThat(flag()).isEqualTo(1);
            assertThat(wakeup.clearedSince(token)).isFalse();
            db.insertEvent("t.a", "wakes", "{}");
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
            assertThat(flag()).as("the writer that notified disarmed the flag").isZero();
            assertThat(wakeup.clearedSince(token)).isTrue();
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
                wakeupFlag().arm();
                s.execute("INSERT INTO events(type, subject) VALUES ('t.a', 'rr')");
            }
            writer.commit();
            assertThat(awaitNotifications(listener, 1)).as("the flag is read as it is now, not as the snapshot saw it")
                .isEqualTo(1);
        }
    }

    /**
     * The race the settling closes. A writer inserts while the flag is down (the relay is busy), so it will
     * send no NOTIFY; the relay then runs out of rows and arms the flag; the writer commits. Claiming once
     * right after arming (the negative control) misses the row, and no NOTIFY ever comes: it would wait for
     * the sweep. The claim after the arming notes the transactions in progress; a later claim that watches
     * them sees this one ended in its own snapshot, and the row with it.
     */
    @Test
    void aWriterThatReadTheFlagUnarmedIsClaimedWhenItCommitsWithoutANotify() throws Exception {
        try (Connection listener = listener(); Connection racing = openWriter("raced")) {
            String racer = xid(racing);
            JdbcOutboxStore store = store();
            wakeupFlag().arm();
            OutboxStore.PassResult afterArming = store.pass(new OutboxStore.Pass(List.of(), 100, List.of(), true));
            // negative control: the naive "arm, then claim once" sees nothing, and sleeps
            assertThat(afterArming.claim().rows()).isEmpty();
            List<String> watch = afterArming.inProgress();
            assertThat(watch).as("the racing writer was in progress at the arming").contains(racer);
            assertThat(store.pass(new OutboxStore.Pass(List.of(), 100, watch, false)).running())
                .as("still in progress").contains(racer);

            racing.commit();
            assertThat(notifications(listener)).as("it read the flag unarmed: no NOTIFY").isZero();
            OutboxStore.PassResult settling = store.pass(new OutboxStore.Pass(List.of(), 100, watch, false));
            assertThat(settling.running()).as("its end is seen without any timing").doesNotContain(racer);
            assertThat(settling.claim().rows()).extracting(ClaimedRow::subject).containsExactly("raced");
        }
    }

    private static String xid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); java.sql.ResultSet rs = s.executeQuery("SELECT pg_current_xact_id()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /**
     * A writer takes the flag down and rolls back: no NOTIFY, but the writer's trigger counted the clear (read
     * before any arming could count it, since V9 an arming that finds the flag down counts it too). Another task
     * then arms the flag again. A look at the flag alone (the negative control) finds it armed and sleeps on; the
     * count of clears moved, and a look at the count since the first arming sees it, while one since the second
     * does not.
     */
    @Test
    void aClearThatRolledBackIsCountedEvenAfterAnotherArmingSetTheFlagAgain() throws Exception {
        WakeupFlag wakeup = wakeupFlag();
        long quietTask = wakeup.arm();
        try (Connection listener = listener(); Connection rolledBack = openWriter("rolled-back")) {
            assertThat(flag()).as("cleared; the NOTIFY would go at commit").isZero();
            rolledBack.rollback();
            assertThat(clears()).as("the rolled-back writer counted its clear").isEqualTo(quietTask + 1);
            long otherTask = wakeup.arm();
            assertThat(flag()).as("the negative control: the flag reads armed").isEqualTo(1);
            assertThat(notifications(listener)).isZero();
            assertThat(wakeup.clearedSince(quietTask)).isTrue();
            assertThat(wakeup.clearedSince(otherTask)).isFalse();
        }
    }

    /**
     * How often one insert, as {@code role} (null: the test's own superuser), called the trigger function, read in
     * the writer's transaction before it commits.
     */
    private static long triggerCallsInOneInsert(String role) throws SQLException {
        try (Connection writer = db.connect(); Statement s = writer.createStatement()) {
            s.execute("SET track_functions = 'pl'");
            writer.setAutoCommit(false);
            if (role != null) {
                s.execute("SET LOCAL ROLE " + role);
            }
            s.execute("INSERT INTO events(type, subject) VALUES ('t.a', 'counted')");
            try (java.sql.ResultSet rs = s.executeQuery(
                    "SELECT pg_stat_get_xact_function_calls('events_notify'::regproc)")) {
                rs.next();
                long calls = rs.getLong(1);
                writer.commit();
                return calls;
            }
        }
    }

    /**
     * V8: while every task is busy the trigger's WHEN reads the flag and the insert makes no PL/pgSQL call at
     * all; while a task waits the function runs, clears and counts as before. The negative control is the
     * trigger as V1 to V7 attached it, without the WHEN: it calls the function on every insert.
     */
    @Test
    void whileTheFlagIsDownAnInsertNeverCallsTheTriggerFunction() throws Exception {
        try {
            assertThat(triggerCallsInOneInsert(null)).as("flag down: the WHEN skips the function").isZero();
            WakeupFlag wakeup = wakeupFlag();
            long token = wakeup.arm();
            assertThat(triggerCallsInOneInsert(null)).as("flag up: the function runs").isOne();
            assertThat(flag()).isZero();
            assertThat(wakeup.clearedSince(token)).isTrue();

            db.execute("DROP TRIGGER events_notify_insert ON events; CREATE TRIGGER events_notify_insert AFTER INSERT"
                + " ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify('outbox_events')");
            assertThat(triggerCallsInOneInsert(null)).as("the negative control: no WHEN, a call per insert").isOne();
        } finally {
            db.runScript(TestPostgres.schemaFile("outbox.sql"), java.util.Map.of());
        }
    }

    /**
     * The WHEN reads the flag as the inserting role. A writer with no grant but INSERT reads it through V8's grant
     * to PUBLIC, and is woken through the function as its owner. Without that grant (revoked against the docs) the
     * writer's insert fails on PostgreSQL 13-17, naming the flag, and writes nothing; on 18 the read is NULL and the
     * writer calls the function, which still wakes the relay.
     */
    @Test
    void aWriterWithOnlyInsertOnTheOutboxReadsTheFlagThroughPublic() throws Exception {
        String writer = "wakeup_writer_" + System.nanoTime();
        db.execute("CREATE ROLE " + writer + " NOLOGIN; GRANT INSERT ON events TO " + writer
            + "; GRANT USAGE ON SEQUENCE events_seq_seq TO " + writer);
        try (Connection listener = listener()) {
            assertThat(triggerCallsInOneInsert(writer)).as("flag down, read through PUBLIC").isZero();
            long token = wakeupFlag().arm();
            assertThat(triggerCallsInOneInsert(writer)).as("flag up").isOne();
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
            assertThat(flag()).isZero();
            assertThat(wakeupFlag().clearedSince(token)).isTrue();

            db.execute("REVOKE SELECT ON SEQUENCE events_wakeup FROM PUBLIC");
            if (db.queryLong("SELECT current_setting('server_version_num')::int") < 180_000) {
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> triggerCallsInOneInsert(writer))
                    .hasMessageContaining("permission denied for sequence events_wakeup");
                assertThat(db.queryLong("SELECT count(*) FROM events WHERE subject = 'counted'")).isEqualTo(2);
            } else {
                assertThat(triggerCallsInOneInsert(writer)).as("unreadable: the function reads it").isOne();
            }
        } finally {
            db.execute("GRANT SELECT ON SEQUENCE events_wakeup TO PUBLIC; DROP OWNED BY " + writer + "; DROP ROLE "
                + writer);
        }
    }

    /** A flag made by V2 and never set reads NULL; V8 makes it read 0, so that the first inserts skip the call. */
    @Test
    void aFlagNeverSetReadsZeroAfterTheMigration() throws Exception {
        db.execute("DROP TRIGGER events_notify_insert ON events; DROP SEQUENCE events_wakeup;"
            + " CREATE SEQUENCE events_wakeup AS smallint MINVALUE 0 MAXVALUE 1 START WITH 0 NO CYCLE");
        assertThat(db.query("SELECT pg_sequence_last_value('events_wakeup')")).containsExactly(
            java.util.Collections.singletonList(null));
        db.runScript(TestPostgres.schemaFile("outbox.sql"), java.util.Map.of());
        assertThat(db.queryLong("SELECT pg_sequence_last_value('events_wakeup')")).isZero();
        assertThat(triggerCallsInOneInsert(null)).isZero();
    }

    @Test
    void aTableFromAnOlderSchemaWithoutTheFlagNotifiesOnEveryInsert() throws Exception {
        // as outbox.sql before V2 made it: the trigger without the WHEN, no flag
        db.execute("DROP TRIGGER events_notify_insert ON events; DROP SEQUENCE events_wakeup; CREATE TRIGGER"
            + " events_notify_insert AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify('outbox_events')");
        try (Connection listener = listener()) {
            db.execute("CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), ''); RETURN NULL; END $$");
            assertThat(wakeupFlag()).isNull();
            db.insertEvent("t.a", "legacy-1", "{}");
            db.insertEvent("t.a", "legacy-2", "{}");
            assertThat(awaitNotifications(listener, 2)).isEqualTo(2);
        } finally {
            db.execute("CREATE SEQUENCE events_wakeup AS smallint MINVALUE 0 MAXVALUE 1 START WITH 0 NO CYCLE;"
                + " GRANT SELECT, UPDATE ON SEQUENCE events_wakeup TO outbox_relay");
            db.runScript(TestPostgres.schemaFile("outbox.sql"), java.util.Map.of());
        }
        assertThat(wakeupFlag()).isNotNull();
    }

    /** A table with the flag but without migration V4: the flag is armed and read, without a count. */
    @Test
    void aTableWithoutTheCountIsArmedAndLookedAtByItsFlag() throws Exception {
        db.execute("DROP SEQUENCE events_wakeup_clears");
        db.execute("CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " IF pg_sequence_last_value('events_wakeup') = 1 THEN PERFORM setval('events_wakeup', 0, true);"
            + " PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), ''); END IF; RETURN NULL; END $$");
        try {
            WakeupFlag wakeup = wakeupFlag();
            assertThat(wakeup.counted()).isFalse();
            long token = wakeup.arm();
            assertThat(flag()).isEqualTo(1);
            assertThat(wakeup.clearedSince(token)).isFalse();
            db.insertEvent("t.a", "clears", "{}");
            assertThat(wakeup.clearedSince(token)).isTrue();
        } finally {
            db.runScript(TestPostgres.schemaFile("outbox.sql"), java.util.Map.of());
        }
        assertThat(wakeupFlag().counted()).isTrue();
    }

    /**
     * The trigger runs as its owner, which in production is the role that ran the migrations, not a
     * superuser. Without EXECUTE on pg_notification_queue_usage() it cannot read the queue: it NOTIFYs as
     * before V4 instead of failing the application's insert.
     */
    @Test
    void aTriggerOwnerWithoutTheQueueFunctionStillLetsTheInsertCommitAndNotifies() throws Exception {
        String owner = "wakeup_owner_" + System.nanoTime();
        db.execute("CREATE ROLE " + owner + " NOLOGIN; GRANT SELECT, UPDATE ON SEQUENCE events_wakeup TO " + owner
            + "; GRANT SELECT, UPDATE ON SEQUENCE events_wakeup_clears TO " + owner
            + "; ALTER FUNCTION events_notify() OWNER TO " + owner
            + "; REVOKE EXECUTE ON FUNCTION pg_notification_queue_usage() FROM PUBLIC");
        try (Connection listener = listener()) {
            long token = wakeupFlag().arm();
            db.insertEvent("t.a", "owner-without-grant", "{}");
            assertThat(db.queryLong("SELECT count(*) FROM events WHERE subject = 'owner-without-grant'")).isOne();
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
            assertThat(wakeupFlag().clearedSince(token)).isTrue();
        } finally {
            db.execute("GRANT EXECUTE ON FUNCTION pg_notification_queue_usage() TO PUBLIC;"
                + " ALTER FUNCTION events_notify() OWNER TO CURRENT_USER; DROP OWNED BY " + owner + "; DROP ROLE " + owner);
        }
    }

    /**
     * A writer interrupted between taking the flag down and counting the clear (a statement timeout, a cancel)
     * leaves the flag down and the count where it was. A quiet task's flag is down only when a writer took it
     * down, so the look reads both; the count alone (the negative control) would sleep on.
     */
    @Test
    void aClearThatWasNeverCountedIsSeenByTheFlagBeingDown() throws Exception {
        WakeupFlag wakeup = wakeupFlag();
        long token = wakeup.arm();
        db.execute("SELECT setval('events_wakeup', 0, true)"); // the clear, and no count after it
        assertThat(clears())
            .as("the negative control: the count did not move").isEqualTo(token);
        assertThat(wakeup.clearedSince(token)).isTrue();
    }

    /**
     * The uncounted clear with two waiting tasks: another task finds the flag down and arms it again before this
     * one looks (looks come every 250 ms, at each task's own time). The flag then reads armed and the count is
     * where this task left it, so its look saw nothing, and rows committed meanwhile in its share (the writers read
     * the flag down: no NOTIFY) waited for the sweep. The arming that finds the flag down counts that clear itself.
     */
    @Test
    void anArmingThatFindsTheFlagDownCountsTheClearSoOtherWaitingTasksSeeIt() throws Exception {
        WakeupFlag waiting = wakeupFlag();
        long token = waiting.arm();
        db.execute("SELECT setval('events_wakeup', 0, true)"); // the clear, and no count after it
        WakeupFlag other = wakeupFlag();
        long othersToken = other.arm(); // another task of the table saw the flag down and waits again
        assertThat(flag()).isEqualTo(1);
        assertThat(waiting.clearedSince(token)).as("the task that waited before the clear sees it").isTrue();
        assertThat(other.clearedSince(othersToken)).as("the arming's own count does not wake the task that armed")
            .isFalse();
    }

    /** The control: an arming that finds the flag up (another task waits already) counts nothing, wakes nobody. */
    @Test
    void anArmingThatFindsTheFlagUpCountsNothing() throws Exception {
        WakeupFlag waiting = wakeupFlag();
        long token = waiting.arm();
        wakeupFlag().arm();
        assertThat(clears()).isEqualTo(token);
        assertThat(waiting.clearedSince(token)).isFalse();
    }

    /**
     * A role that may read the count but not update it (an outbox made before migration V9, or the grant revoked
     * while the task runs) arms as before V9: it neither fails nor counts, and the flag alone tells its own look of an
     * uncounted clear. The grant given back counts again at the next arming, without a restart.
     */
    @Test
    void aRoleThatMayNotAddToTheCountArmsWithoutCountingAndCountsOnceItMay() throws Exception {
        String role = "wakeup_v8_" + System.nanoTime();
        db.execute("CREATE ROLE " + role + " LOGIN IN ROLE outbox_relay");
        try (HikariDataSource asRole = new TestDatabase(db.name(), db.jdbcUrl(), role, db.password()).pool(role, 1)) {
            WakeupFlag wakeup = WakeupFlag.of(asRole, "events");
            db.execute("REVOKE UPDATE ON SEQUENCE events_wakeup_clears FROM outbox_relay");
            long token = wakeup.arm();
            assertThat(flag()).isEqualTo(1);
            assertThat(clears())
                .as("found down (the test's reset), not counted: the role may not").isEqualTo(token);
            db.execute("SELECT setval('events_wakeup', 0, true)");
            assertThat(wakeup.clearedSince(token)).isTrue();

            db.execute("GRANT UPDATE ON SEQUENCE events_wakeup_clears TO outbox_relay");
            assertThat(wakeup.arm()).as("found down again, and counted now").isEqualTo(token + 1);
        } finally {
            db.execute("GRANT UPDATE ON SEQUENCE events_wakeup_clears TO outbox_relay");
            db.execute("DROP ROLE " + role);
        }
    }

    /**
     * A snapshot lists no transaction at or above its xmax, and while nothing later has ended, the newest
     * writer is there: in progress, yet not listed. Here the flag is an unlogged sequence and already up, so the
     * arming takes no transaction id that would push xmax past the writer (a logged setval does, and so does the
     * count of a clear when the arming finds the flag down, which hid this; the test checks the writer is unlisted). The
     * claim after the arming also notes the ids from xmax to one it takes itself, and so watches the writer.
     */
    @Test
    void theNewestWriterIsWatchedEvenWhenNoTransactionEndedAfterIt() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(db.queryLong("SELECT current_setting('server_version_num')::int")
            >= 150_000, "unlogged sequences came with PostgreSQL 15");
        db.execute("ALTER SEQUENCE events_wakeup SET UNLOGGED");
        try (Connection racing = openWriter("newest")) {
            String racer = xid(racing);
            // the flag up already (another task armed it): the arming only sets the unlogged flag, taking no id; down,
            // it would count a clear on the logged count, whose id would end after the writer's and list it
            db.execute("SELECT setval('events_wakeup', 1, true)");
            assertThat(db.query("SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) x"))
                .as("the writer is not listed: only the ids from xmax on find it").doesNotContain(List.of(racer));
            wakeupFlag().arm();
            assertThat(db.query("SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) x"))
                .as("nor after the arming").doesNotContain(List.of(racer));
            OutboxStore.PassResult afterArming = store().pass(new OutboxStore.Pass(List.of(), 100, List.of(), true));
            assertThat(afterArming.inProgress()).contains(racer);
            racing.commit();
            OutboxStore.PassResult settling = store().pass(new OutboxStore.Pass(List.of(), 100, afterArming.inProgress(),
                false));
            assertThat(settling.running()).doesNotContain(racer);
            assertThat(settling.claim().rows()).extracting(ClaimedRow::subject).containsExactly("newest");
        } finally {
            db.execute("ALTER SEQUENCE events_wakeup SET LOGGED");
        }
    }
}
