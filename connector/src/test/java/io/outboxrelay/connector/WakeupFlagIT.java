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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The wake-up flag against a real PostgreSQL (docs/wakeup.md): writers NOTIFY only while a relay task has
 * armed the flag, every clear moves the count that tasks of earlier versions read, an arming writes only where the
 * flag is down, and a writer that read the flag down just before a task armed it is claimed by the next look. Every step is ordered by the test
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

    /** The count of the flag's clears (0 before the first). */
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
            wakeup.arm();
            long token = clears();
            assertThat(flag()).isEqualTo(1);
            db.insertEvent("t.a", "wakes", "{}");
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
            assertThat(flag()).as("the writer that notified disarmed the flag").isZero();
            assertThat(clears()).as("and counted the clear (for the looks of earlier versions)").isEqualTo(token + 1);
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
     * The race a quiet task's looks close. A writer inserts while the flag is down (the relay is busy), so it will
     * send no NOTIFY; the relay then runs out of rows, arms the flag and claims: nothing yet. The writer commits,
     * and no NOTIFY comes (the negative control: a task that waited for one after claiming once would leave the row
     * to the sweep). The task's next look, an arming and a claim, takes it.
     */
    @Test
    void aWriterThatReadTheFlagUnarmedIsClaimedByTheNextLookWithoutANotify() throws Exception {
        try (Connection listener = listener(); Connection racing = openWriter("raced")) {
            JdbcOutboxStore store = store();
            WakeupFlag wakeup = wakeupFlag();
            wakeup.arm();
            assertThat(store.claim(100).rows()).as("in progress at the arming").isEmpty();

            racing.commit();
            assertThat(notifications(listener)).as("it read the flag unarmed: no NOTIFY").isZero();
            wakeup.arm();
            assertThat(store.claim(100).rows()).extracting(ClaimedRow::subject).containsExactly("raced");
        }
    }

    /**
     * A writer takes the flag down and rolls back: no NOTIFY, the flag stays down (sequences are not transactional),
     * so the next writers send none either; the trigger counted the clear (which tasks of earlier versions read). The
     * next look arms the flag again, and the writer after it NOTIFYs.
     */
    @Test
    void aClearThatRolledBackLeavesTheFlagDownUntilTheNextLookArmsIt() throws Exception {
        WakeupFlag wakeup = wakeupFlag();
        wakeup.arm();
        long before = clears();
        try (Connection listener = listener()) {
            try (Connection rolledBack = openWriter("rolled-back")) {
                assertThat(flag()).as("cleared; the NOTIFY would go at commit").isZero();
                rolledBack.rollback();
            }
            assertThat(clears()).as("the rolled-back writer counted its clear").isEqualTo(before + 1);
            db.insertEvent("t.a", "after-rollback", "{}");
            assertThat(notifications(listener)).as("the negative control: the flag is down, no NOTIFY").isZero();
            wakeup.arm();
            db.insertEvent("t.a", "after-look", "{}");
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
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
            wakeupFlag().arm();
            long token = clears();
            assertThat(triggerCallsInOneInsert(null)).as("flag up: the function runs").isOne();
            assertThat(flag()).isZero();
            assertThat(clears()).isEqualTo(token + 1);

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
            wakeupFlag().arm();
            long token = clears();
            assertThat(triggerCallsInOneInsert(writer)).as("flag up").isOne();
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
            assertThat(flag()).isZero();
            assertThat(clears()).isEqualTo(token + 1);

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

    /** A table with the flag but without migration V4: the flag is armed without a count. */
    @Test
    void aTableWithoutTheCountIsArmed() throws Exception {
        db.execute("DROP SEQUENCE events_wakeup_clears");
        db.execute("CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " IF pg_sequence_last_value('events_wakeup') = 1 THEN PERFORM setval('events_wakeup', 0, true);"
            + " PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), ''); END IF; RETURN NULL; END $$");
        try {
            WakeupFlag wakeup = wakeupFlag();
            wakeup.arm();
            assertThat(flag()).isEqualTo(1);
            db.insertEvent("t.a", "clears", "{}");
            assertThat(flag()).isZero();
            wakeup.arm();
            assertThat(flag()).isEqualTo(1);
        } finally {
            db.runScript(TestPostgres.schemaFile("outbox.sql"), java.util.Map.of());
        }
        wakeupFlag().arm();
        assertThat(flag()).isEqualTo(1);
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
            wakeupFlag().arm();
            long token = clears();
            db.insertEvent("t.a", "owner-without-grant", "{}");
            assertThat(db.queryLong("SELECT count(*) FROM events WHERE subject = 'owner-without-grant'")).isOne();
            assertThat(awaitNotifications(listener, 1)).isEqualTo(1);
            assertThat(clears()).isEqualTo(token + 1);
        } finally {
            db.execute("GRANT EXECUTE ON FUNCTION pg_notification_queue_usage() TO PUBLIC;"
                + " ALTER FUNCTION events_notify() OWNER TO CURRENT_USER; DROP OWNED BY " + owner + "; DROP ROLE " + owner);
        }
    }

    /**
     * A writer interrupted between taking the flag down and counting the clear leaves the count where it was: an
     * arming that finds the flag down counts that clear itself (V9), so tasks of earlier versions, which wait until
     * the count moves, see it during a rolling upgrade.
     */
    @Test
    void anArmingThatFindsTheFlagDownCountsTheClearForTasksOfEarlierVersions() throws Exception {
        WakeupFlag waiting = wakeupFlag();
        waiting.arm();
        long token = clears();
        db.execute("SELECT setval('events_wakeup', 0, true)"); // the clear, and no count after it
        wakeupFlag().arm();
        assertThat(flag()).isEqualTo(1);
        assertThat(clears()).isEqualTo(token + 1);
    }

    /**
     * The arming reads and sets the flag, and counts a clear only where the role may: a role with the flag's grants
     * alone uses the wake-up (until 2026-12-06 the relay also read the count, and such a role was kept polling). The
     * control: without UPDATE on the flag it may not.
     */
    @Test
    void aRoleWithTheFlagsGrantsAloneArmsWithoutAnyGrantOnTheCount() throws Exception {
        String role = "wakeup_flag_only_" + System.nanoTime();
        db.execute("CREATE ROLE " + role + " LOGIN; GRANT SELECT, UPDATE ON SEQUENCE events_wakeup TO " + role);
        try (HikariDataSource asRole = new TestDatabase(db.name(), db.jdbcUrl(), role, db.password()).pool(role, 1)) {
            WakeupFlag wakeup = WakeupFlag.of(asRole, "events");
            db.execute("SELECT setval('events_wakeup', 0, true)");
            long token = clears();
            wakeup.arm();
            assertThat(flag()).isEqualTo(1);
            assertThat(clears()).as("not counted: the role may not").isEqualTo(token);
            wakeup.arm();
            assertThat(flag()).isEqualTo(1);

            db.execute("REVOKE UPDATE ON SEQUENCE events_wakeup FROM " + role);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> WakeupFlag.of(asRole, "events"))
                .isInstanceOf(WakeupFlag.NotPermitted.class).hasMessageContaining("GRANT SELECT, UPDATE ON SEQUENCE");
        } finally {
            db.execute("DROP OWNED BY " + role + "; DROP ROLE " + role);
        }
    }

    /**
     * A quiet task arms at every look, every 250 ms: an arming that finds the flag up writes nothing (a setval takes a
     * transaction id and writes WAL; found by review). The cluster's WAL also moves with other sessions' work, so the
     * test arms up to five times and needs one arming that moved it by nothing; the negative control, an arming that
     * finds the flag down, moves it every time.
     */
    @Test
    void anArmingThatFindsTheFlagUpWritesNothing() throws Exception {
        WakeupFlag wakeup = wakeupFlag();
        wakeup.arm();
        boolean wroteNothing = false;
        for (int i = 0; i < 5 && !wroteNothing; i++) {
            long before = walBytes();
            wakeup.arm();
            wroteNothing = walBytes() == before;
        }
        assertThat(wroteNothing).isTrue();
        for (int i = 0; i < 3; i++) {
            db.execute("SELECT setval('events_wakeup', 0, true)");
            long before = walBytes();
            wakeup.arm();
            assertThat(walBytes()).as("the control: found down, set").isGreaterThan(before);
            assertThat(flag()).isEqualTo(1);
        }
    }

    private static long walBytes() {
        return db.queryLong("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint");
    }

    /** The control: an arming that finds the flag up (another task waits already) counts nothing. */
    @Test
    void anArmingThatFindsTheFlagUpCountsNothing() throws Exception {
        wakeupFlag().arm();
        long token = clears();
        wakeupFlag().arm();
        assertThat(clears()).isEqualTo(token);
    }

    /**
     * A role that may read the count but not update it (an outbox made before migration V9, or the grant revoked
     * while the task runs) arms as before V9: it neither fails nor counts. The grant given back counts again at the
     * next arming, without a restart.
     */
    @Test
    void aRoleThatMayNotAddToTheCountArmsWithoutCountingAndCountsOnceItMay() throws Exception {
        String role = "wakeup_v8_" + System.nanoTime();
        db.execute("CREATE ROLE " + role + " LOGIN IN ROLE outbox_relay");
        try (HikariDataSource asRole = new TestDatabase(db.name(), db.jdbcUrl(), role, db.password()).pool(role, 1)) {
            WakeupFlag wakeup = WakeupFlag.of(asRole, "events");
            db.execute("REVOKE UPDATE ON SEQUENCE events_wakeup_clears FROM outbox_relay");
            long token = clears();
            wakeup.arm();
            assertThat(flag()).isEqualTo(1);
            assertThat(clears())
                .as("found down (the test's reset), not counted: the role may not").isEqualTo(token);
            db.execute("SELECT setval('events_wakeup', 0, true)");

            db.execute("GRANT UPDATE ON SEQUENCE events_wakeup_clears TO outbox_relay");
            wakeup.arm();
            assertThat(clears()).as("found down again, and counted now").isEqualTo(token + 1);
        } finally {
            db.execute("GRANT UPDATE ON SEQUENCE events_wakeup_clears TO outbox_relay");
            db.execute("DROP ROLE " + role);
        }
    }
}
