package io.outboxrelay.mentions;

import static io.outboxrelay.mentions.PostgresFixture.account;
import static io.outboxrelay.mentions.PostgresFixture.channel;
import static io.outboxrelay.mentions.PostgresFixture.exec;
import static io.outboxrelay.mentions.PostgresFixture.hold;
import static io.outboxrelay.mentions.PostgresFixture.member;
import static io.outboxrelay.mentions.PostgresFixture.message;
import static io.outboxrelay.mentions.PostgresFixture.queryLong;
import static io.outboxrelay.mentions.PostgresFixture.routedAt;
import static io.outboxrelay.mentions.PostgresFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.TaskIdentityKeys;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The task as a Connect worker runs it (public constructor, the connector's full props, a real pool
 * and LISTEN session) against a real PostgreSQL, without Kafka: acknowledgements are handed in by
 * hand. Guards the acceptance legs at task level: crash (an unrouted mention of a gap member becomes
 * an owed row and an OWED record, and is marked once acked; a restart publishes nothing), the
 * disabled negative control, the held leg via NOTIFY, the late commit, a lost LISTEN session, and a
 * role that may not set the marker.
 */
class MentionRecoveryTaskPostgresIT {
    private static final RecordMetadata ACK = new RecordMetadata(new TopicPartition("mentions.recovered", 0), 0, 0, 0, 0, 0);
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static PostgresFixture pg;

    private String url;
    private Connection owner;
    private final List<MentionRecoveryTask> tasks = new ArrayList<>();

    @BeforeAll
    static void startPostgres() {
        pg = new PostgresFixture();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        pg.close();
    }

    @BeforeEach
    void chat() throws SQLException {
        url = pg.createDatabase();
        owner = pg.owner(url);
        pg.applyMentionsSchema(owner);
        channel(owner, "ch", false);
        account(owner, "u-1", "hugo", "human", "ch");
        account(owner, "a-ada", "ada", "agent", "elsewhere"); // offline, unsubscribed, not home: the gap population
        account(owner, "a-bob", "bob", "agent", "ch");
        member(owner, "ch", "u-1", true);
        member(owner, "ch", "a-ada", false);
        member(owner, "ch", "a-bob", true);
    }

    @AfterEach
    void stopTasks() throws SQLException {
        tasks.forEach(MentionRecoveryTask::stop);
        owner.close();
    }

    private MentionRecoveryTask startTask(String enabled, String... overrides) {
        Map<String, String> props = MentionRecoveryTaskTest.connectorProps();
        for (int i = 0; i < overrides.length; i += 2) {
            props.put(overrides[i], overrides[i + 1]);
        }
        props.put("connection.url", url);
        props.put("connection.user", PostgresFixture.RELAY_USER);
        props.put("connection.password", PostgresFixture.RELAY_PASSWORD);
        props.put("mentions.enabled", enabled);
        props.putIfAbsent("mentions.scan.interval.ms", "3600000"); // only start and NOTIFY trigger passes here
        MentionRecoveryTask task = new MentionRecoveryTask();
        tasks.add(task);
        task.start(props);
        return task;
    }

    /** Polls (each poll waits at most 500 ms) until the condition holds; returns every record polled. */
    private static List<SourceRecord> pollUntil(MentionRecoveryTask task, BooleanSupplier condition)
        throws InterruptedException {
        List<SourceRecord> polled = new ArrayList<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within " + DEADLINE + "; polled " + polled.size() + " records");
            }
            List<SourceRecord> records = task.poll();
            if (records != null) {
                polled.addAll(records);
            }
        }
        return polled;
    }

    private static BooleanSupplier passesCompleted(MentionRecoveryTask task, int n) {
        return () -> task.metrics().passesCompleted() >= n;
    }

    private static BooleanSupplier recovered(MentionRecoveryTask task, int records) {
        return () -> task.metrics().recoveredTotal() >= records;
    }

    private BooleanSupplier listening() {
        return () -> {
            try {
                return queryLong(owner, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    + "AND application_name = 'outbox-relay-mentions' AND query LIKE 'LISTEN%'") > 0;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private BooleanSupplier marked(String messageId) {
        return () -> {
            try {
                return routedAt(owner, messageId) != null;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private static List<String> describe(List<SourceRecord> records) {
        return records.stream().map(r -> {
            Struct v = (Struct) r.value();
            return v.getString("message_id") + "->" + r.key() + ":" + v.getString("action");
        }).toList();
    }

    private long owedRows() throws SQLException {
        return queryLong(owner, "SELECT count(*) FROM owed_mentions");
    }

    @Test
    void recoversAnUnroutedMentionAtStartAndPublishesNothingNewAfterARestart() throws Exception {
        message(owner, "m1", "ch", "u-1", "hi @ada", System.currentTimeMillis());
        MentionRecoveryTask task = startTask("true");

        List<SourceRecord> records = pollUntil(task, recovered(task, 1));
        assertThat(describe(records)).containsExactly("m1->a-ada:OWED");
        assertThat(owedRows()).as("owed row written before the record").isEqualTo(1);
        assertThat(routedAt(owner, "m1")).as("not marked before the ack").isNull();

        task.commitRecord(records.get(0), ACK);
        pollUntil(task, marked("m1"));
        task.stop();

        MentionRecoveryTask restarted = startTask("true");
        List<SourceRecord> again = pollUntil(restarted, passesCompleted(restarted, 1));
        assertThat(again).isEmpty();
        assertThat(owedRows()).isEqualTo(1);
    }

    /**
     * The contract's per-message fault, on real constraints: one message whose owed row a trigger refuses, and one
     * whose mark a CHECK refuses, each stay unrouted while the others are recovered and marked (found by review:
     * either one held back every later message).
     */
    @Test
    void aMessageTheDatabaseRefusesToOweOrToMarkHoldsBackNoOther() throws Exception {
        exec(owner, """
            CREATE FUNCTION refuse_owed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.message_id = 'm-owe' THEN RAISE EXCEPTION 'test: no owed row for %', NEW.message_id; END IF;
              RETURN NEW;
            END $$""");
        exec(owner, "CREATE TRIGGER refuse_owed BEFORE INSERT ON owed_mentions FOR EACH ROW EXECUTE FUNCTION refuse_owed()");
        exec(owner, "ALTER TABLE messages ADD CONSTRAINT refuse_mark CHECK (id <> 'm-mark' OR mentions_routed_at IS NULL)"
            + " NOT VALID");
        long now = System.currentTimeMillis();
        message(owner, "m-owe", "ch", "u-1", "hi @ada", now);
        message(owner, "m-mark", "ch", "u-1", "hi @bob", now);
        message(owner, "m-ok", "ch", "u-1", "hi @ada", now);
        MentionRecoveryTask task = startTask("true");

        List<SourceRecord> records = pollUntil(task, recovered(task, 2));
        assertThat(describe(records)).containsExactly("m-mark->a-bob:WAKE", "m-ok->a-ada:OWED");
        records.forEach(r -> task.commitRecord(r, ACK));
        List<SourceRecord> later = new ArrayList<>(pollUntil(task, marked("m-ok")));
        long passes = task.metrics().passesCompleted();
        exec(owner, "SELECT pg_notify('mentions_recovery', '')");
        later.addAll(pollUntil(task, passesCompleted(task, (int) passes + 1)));

        assertThat(later).as("m-mark was delivered: not published again by the next pass").isEmpty();
        assertThat(routedAt(owner, "m-owe")).isNull();
        assertThat(routedAt(owner, "m-mark")).isNull();
        assertThat(queryLong(owner, "SELECT count(*) FROM owed_mentions WHERE message_id = 'm-ok'")).isEqualTo(1);
        assertThat(task.metrics().messageFaults()).as("each pass counts both again").isGreaterThanOrEqualTo(4);
    }

    /**
     * Two connectors with mention recovery on one database: while the first task's records of m1 are in flight, m1 is
     * still unrouted (the control: the second task's own read finds it, and would publish it again), yet the second
     * task publishes nothing, since the first holds the scan. Once the first stops, the second takes over at its next
     * look (a scan interval of 200 ms here) and recovers what comes next.
     */
    @Test
    void aSecondConnectorsMentionTaskStaysIdleWhileTheFirstScansAndTakesOverOnceItStops() throws Exception {
        message(owner, "m1", "ch", "u-1", "hi @ada", System.currentTimeMillis());
        MentionRecoveryTask first = startTask("true");
        List<SourceRecord> firsts = pollUntil(first, recovered(first, 1));
        assertThat(describe(firsts)).containsExactly("m1->a-ada:OWED");

        MentionRecoveryTask second = startTask("true", "name", "other-connector", "mentions.scan.interval.ms", "200");
        assertThat(pollUntil(second, () -> second.scanHeldBy() != null)).isEmpty();
        assertThat(second.scanHeldBy()).as("names the first connector's task")
            .startsWith("outbox-relay-mentions-scan:" + TaskIdentityKeys.DEFAULT_CONNECTOR_NAME + "/1 (pid ");
        assertThat(new JdbcMentionStore(PostgresFixture.relayDataSource(url)).readUnrouted(0, Long.MAX_VALUE, 0, 10))
            .as("m1 is still unrouted: only the scan's lock keeps the second task from publishing it")
            .extracting(UnroutedMessage::id).containsExactly("m1");
        assertThat(second.poll()).isNull();

        first.commitRecord(firsts.get(0), ACK);
        pollUntil(first, marked("m1"));
        first.stop();
        message(owner, "m2", "ch", "u-1", "and @ada", System.currentTimeMillis());
        List<SourceRecord> seconds = pollUntil(second, recovered(second, 1));
        assertThat(describe(seconds)).containsExactly("m2->a-ada:OWED");
        assertThat(second.scanHeldBy()).isNull();
    }

    /**
     * The holder's scan session is killed (a DBA's pg_terminate_backend, a network cut): its lock goes with it, the
     * other connector's task takes the scan at its next look, and the first task, at its next batch, finds it held
     * and scans no more (the control: before the kill, the second task was the one kept idle).
     */
    @Test
    void aTaskThatLostItsScanSessionLeavesTheScanToTheTaskThatTookItOver() throws Exception {
        MentionRecoveryTask first = startTask("true", "mentions.scan.interval.ms", "200");
        pollUntil(first, passesCompleted(first, 1));
        MentionRecoveryTask second = startTask("true", "name", "other-connector", "mentions.scan.interval.ms", "200");
        pollUntil(second, () -> second.scanHeldBy() != null);

        exec(owner, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?",
            "outbox-relay-mentions-scan:" + TaskIdentityKeys.DEFAULT_CONNECTOR_NAME + "/1");
        pollUntil(second, () -> second.scanHeldBy() == null && second.metrics().passesCompleted() >= 1);
        exec(owner, "SELECT pg_notify('mentions_recovery', '')");
        pollUntil(first, () -> first.scanHeldBy() != null);
        assertThat(first.scanHeldBy()).startsWith("outbox-relay-mentions-scan:other-connector/1 (pid ");

        message(owner, "m3", "ch", "u-1", "@ada again", System.currentTimeMillis());
        exec(owner, "SELECT pg_notify('mentions_recovery', '')");
        assertThat(describe(pollUntil(second, recovered(second, 1)))).containsExactly("m3->a-ada:OWED");
        assertThat(first.poll()).isNull();
        assertThat(first.metrics().recoveredTotal()).isZero();
    }

    /**
     * The table is created again under the same name while a task holds the scan: the key (the table's oid) changes.
     * The holder's next look takes the new key, so another task finds it held; a holder that only checked its session
     * was alive would keep the old key, and the other task would take the new one: two scanning tasks.
     */
    @Test
    void aTableCreatedAgainMovesTheHoldersLockToItsNewKey() throws SQLException {
        try (ScanLock a = new ScanLock(() -> pg.relay(url), "task-a");
             ScanLock b = new ScanLock(() -> pg.relay(url), "task-b")) {
            assertThat(a.otherScanner()).isNull();
            assertThat(b.otherScanner()).as("held by a").startsWith("task-a (pid ");

            exec(owner, "ALTER TABLE messages RENAME TO messages_before");
            exec(owner, "CREATE TABLE messages (LIKE messages_before INCLUDING ALL)");
            exec(owner, "GRANT SELECT, UPDATE ON messages TO outbox_relay");

            assertThat(a.otherScanner()).as("a takes the new table's key").isNull();
            assertThat(b.otherScanner()).as("still held by a, for the table as it is now").startsWith("task-a (pid ");
            a.close();
            assertThat(b.otherScanner()).as("a's stop lets b scan").isNull();
        }
    }

    @Test
    void touchesNothingWhenDisabled() throws Exception {
        message(owner, "m1", "ch", "u-1", "hi @ada", System.currentTimeMillis());
        MentionRecoveryTask task = startTask("false");

        for (int i = 0; i < 3; i++) {
            assertThat(task.poll()).isNull();
        }

        assertThat(owedRows()).isZero();
        assertThat(routedAt(owner, "m1")).isNull();
    }

    @Test
    void skipsAMessageHeldByALiveSessionAndRecoversItOnNotifyOnceTheSessionEnded() throws Exception {
        long now = System.currentTimeMillis();
        session(owner, "s-bob", "a-bob", now, null);
        message(owner, "held", "ch", "a-bob", "@ada look", now);
        hold(owner, "held", "s-bob");
        MentionRecoveryTask task = startTask("true");

        assertThat(pollUntil(task, passesCompleted(task, 1))).isEmpty();
        assertThat(routedAt(owner, "held")).isNull();
        pollUntil(task, listening());

        exec(owner, "UPDATE agent_sessions SET ended_at_unix_ms = ? WHERE id = 's-bob'", System.currentTimeMillis());
        exec(owner, "SELECT pg_notify('mentions_recovery', '')");
        List<SourceRecord> records = pollUntil(task, recovered(task, 1));

        assertThat(describe(records)).containsExactly("held->a-ada:OWED");
    }

    @Test
    void recoversALowerSeqThatCommitsAfterAHigherOneWasMarked() throws Exception {
        long now = System.currentTimeMillis();
        try (Connection slow = pg.owner(url)) {
            slow.setAutoCommit(false);
            long lowSeq = message(slow, "low", "ch", "u-1", "@ada first", now);
            long highSeq = message(owner, "high", "ch", "u-1", "@ada second", now);
            assertThat(lowSeq).isLessThan(highSeq);

            MentionRecoveryTask task = startTask("true");
            List<SourceRecord> first = pollUntil(task, recovered(task, 1));
            assertThat(describe(first)).containsExactly("high->a-ada:OWED");
            task.commitRecord(first.get(0), ACK);
            pollUntil(task, marked("high"));
            pollUntil(task, passesCompleted(task, 1));
            pollUntil(task, listening());

            slow.commit();
            exec(owner, "SELECT pg_notify('mentions_recovery', '')");
            List<SourceRecord> late = pollUntil(task, recovered(task, 2));

            assertThat(describe(late)).containsExactly("low->a-ada:OWED");
        }
    }

    @Test
    void reopensALostListenSessionAndScansForWhatItsNotifyWouldHaveAnnounced() throws Exception {
        MentionRecoveryTask task = startTask("true");
        pollUntil(task, passesCompleted(task, 1));
        pollUntil(task, listening());

        exec(owner, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            + "AND application_name = 'outbox-relay-mentions' AND query LIKE 'LISTEN%'");
        message(owner, "m1", "ch", "u-1", "hi @ada", System.currentTimeMillis()); // its NOTIFY would be lost
        List<SourceRecord> records = pollUntil(task, recovered(task, 1));

        assertThat(describe(records)).containsExactly("m1->a-ada:OWED");
    }

    @Test
    void aMarkTheRoleMayNotWriteIsRetriedAndTheTaskCarriesOnOnceTheGrantIsBack() throws Exception {
        exec(owner, "REVOKE UPDATE (mentions_routed_at) ON messages FROM outbox_relay");
        message(owner, "m1", "ch", "u-1", "hi @ada", System.currentTimeMillis());
        MentionRecoveryTask task = startTask("true");
        List<SourceRecord> records = pollUntil(task, recovered(task, 1));

        task.commitRecord(records.get(0), ACK);
        List<SourceRecord> meanwhile = pollUntil(task, () -> task.metrics().marksFailed() >= 1);
        message(owner, "m2", "ch", "u-1", "and @ada again", System.currentTimeMillis());
        exec(owner, "NOTIFY mentions_recovery");
        meanwhile.addAll(pollUntil(task, () -> task.metrics().marksFailed() >= 2));

        assertThat(meanwhile).as("no batch is read while a delivered message waits for its mark").isEmpty();
        assertThat(routedAt(owner, "m1")).isNull();

        exec(owner, "GRANT UPDATE (mentions_routed_at) ON messages TO outbox_relay");
        List<SourceRecord> after = pollUntil(task, () -> marked("m1").getAsBoolean() && recovered(task, 2).getAsBoolean());

        assertThat(describe(after)).as("the task carried on: the next pass routes m2, and m1 is not published again")
            .containsExactly("m2->a-ada:OWED");
        task.stop();
    }
}
