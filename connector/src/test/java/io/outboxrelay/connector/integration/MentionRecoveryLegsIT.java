package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The five acceptance legs of mention recovery (the companion task of mention-recovery-task/), driven
 * through a real Connect worker, broker and PostgreSQL, plus the routing arms and a per-message fault.
 * Guards the symptom the design exists for: a chat message committed but never mention-routed (the
 * server crashed, or its bus overran, between commit and the pass) silently loses the @mention of an
 * agent outside the delivery sweep. Each leg has its way to fail: the crash leg against
 * {@code mentions.enabled=false}, the held leg against a live session, the recovery-point leg against a
 * missing NOTIFY, the late commit against a persisted seq cursor.
 */
class MentionRecoveryLegsIT {
    /** Held sessions and STEER members must stay live for the whole test, whatever the machine's speed. */
    private static final String SESSION_LIVE_MS = "600000";
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    private String connector;

    @AfterEach
    void deleteConnector() {
        if (connector != null) {
            TestConnect.cluster().deleteConnector(connector);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Crash leg and its negative control

    @Test
    void crashLegRecoversAnUnroutedMentionOfAGapMemberAtStartAndARestartPublishesNothingNew() {
        Chat chat = Chat.create("mrl_crash");
        long seq = chat.message("m1", "ch", "u-hugo", "hi @ada, see above");
        String topic = "mrl-crash-mentions";
        long startedAt = System.currentTimeMillis();
        start("mrl-crash", chat, topic, 2, Map.of("mentions.scan.interval.ms", "3600000"));

        assertThat(TestConnect.cluster().connectorStatus(connector).tasks())
            .as("relay tasks (tasks.max - 1) + the companion task").hasSize(1 + 1);
        assertThat(taskKinds(connector)).containsExactly("relay", "mentions");

        await().atMost(DEADLINE).until(() -> chat.marked("m1"));
        List<TestConnect.Received> records = TestConnect.consume(1, DEADLINE, topic);
        assertThat(records).hasSize(1);
        TestConnect.Received r = records.get(0);
        assertThat(r.key()).isEqualTo("a-ada");
        JsonNode v = r.value();
        assertThat(v.get("message_id").asText()).isEqualTo("m1");
        assertThat(v.get("message_seq").asLong()).isEqualTo(seq);
        assertThat(v.get("channel_id").asText()).isEqualTo("ch");
        assertThat(v.get("author_id").asText()).isEqualTo("u-hugo");
        assertThat(v.get("agent_account_id").asText()).isEqualTo("a-ada");
        assertThat(v.get("agent_handle").asText()).isEqualTo("ada");
        assertThat(v.get("action").asText()).isEqualTo("OWED");
        assertThat(v.get("recovered_at").asLong()).isBetween(startedAt, System.currentTimeMillis());
        assertThat(chat.owed()).containsExactly("a-ada/m1");
        long owedAt = chat.queryLong("SELECT recorded_at_unix_ms FROM owed_mentions WHERE message_id = 'm1'");
        assertThat(chat.routedAt("m1")).isBetween(owedAt, System.currentTimeMillis());

        // restart connector and tasks; a new listener session proves the new companion task started
        await().atMost(DEADLINE).until(chat::listening);
        int oldListener = chat.listenerPid();
        ConnectorStateInfo restarting = TestConnect.cluster().restartConnectorAndTasks(connector, false, true, false);
        assertThat(restarting.tasks()).hasSize(2);
        await().atMost(DEADLINE).until(() -> {
            List<Integer> pids = chat.listenerPids();
            return pids.size() == 1 && pids.get(0) != oldListener;
        });
        awaitRunning(connector, 2);
        // a sentinel recovered by the restarted task proves a full pass (from seq 0) ran after the
        // restart: had m1's marker not held, that pass would have published m1 again
        chat.message("sentinel", "ch", "u-hugo", "@ada again");
        chat.notifyRecovery();
        await().atMost(DEADLINE).until(() -> chat.marked("sentinel"));

        assertThat(TestConnect.countRecords(topic)).as("records after the restart").isEqualTo(2);
        assertThat(describe(TestConnect.consume(2, DEADLINE, topic)))
            .containsExactlyInAnyOrder("m1->a-ada:OWED", "sentinel->a-ada:OWED");
        assertThat(chat.owed()).containsExactly("a-ada/m1", "a-ada/sentinel");
        assertThat(chat.queryLong("SELECT recorded_at_unix_ms FROM owed_mentions WHERE message_id = 'm1'"))
            .as("m1's owed row was not written again").isEqualTo(owedAt);
    }

    @Test
    void negativeControlWithMentionsDisabledTouchesNothingWhileTheRelayRuns() {
        Chat chat = Chat.create("mrl_disabled");
        chat.message("m1", "ch", "u-hugo", "hi @ada, see above");
        long eventSeq = chat.db.insertEvent("chat.message.created", "m1", "{}");
        String topic = "mrl-disabled-mentions";
        Map<String, String> cfg = config(chat, topic, 2, Map.of("mentions.enabled", "false"));
        connector = "mrl-disabled";
        TestConnect.cluster().configureConnector(connector, cfg);
        awaitRunning(connector, 2);

        // the relay demonstrably ran: the outbox event inserted alongside was fanned out
        await().atMost(DEADLINE).until(() ->
            chat.db.queryLong("SELECT count(*) FROM events WHERE seq = ? AND fanned_out_at IS NOT NULL",
                eventSeq) == 1);
        assertThat(TestConnect.countRecords("mrl-disabled-events")).isEqualTo(1);

        assertThat(chat.owed()).isEmpty();
        assertThat(chat.routedAt("m1")).isNull();
        assertThat(TestConnect.countRecords(topic)).isZero();
        assertThat(taskKinds(connector)).containsExactly("relay", "relay");
        assertThat(chat.listenerPids()).as("no mention LISTEN session").isEmpty();

        // the same database and message with the flag flipped: recovered, so the setup was sufficient
        cfg.put("mentions.enabled", "true");
        TestConnect.cluster().configureConnector(connector, cfg);
        await().atMost(DEADLINE).until(() -> chat.marked("m1"));
        assertThat(chat.owed()).containsExactly("a-ada/m1");
        assertThat(describe(TestConnect.consume(1, DEADLINE, topic))).containsExactly("m1->a-ada:OWED");
    }

    // ------------------------------------------------------------------------------------------------
    // Held leg

    @Test
    void heldLegSkipsAMessageHeldByALiveSessionAndRecoversItOnTheNextPassOnceTheSessionEnded() {
        Chat chat = Chat.create("mrl_held");
        long now = System.currentTimeMillis();
        chat.session("s-bob", "a-bob", now, null);
        chat.message("held", "ch", "a-bob", "@ada look at this"); // agent-authored, held by its live session
        chat.hold("held", "s-bob");
        chat.message("control-1", "ch", "u-hugo", "@ada control");
        String topic = "mrl-held-mentions";
        start("mrl-held", chat, topic, 2, Map.of("mentions.scan.interval.ms", "300", "mentions.min.age.ms", "0",
            "mentions.session.live.ms", SESSION_LIVE_MS));

        // control-1 (higher seq, same batch) marked: the start pass has read past the held message. Owed
        // rows are written for the whole batch before any record, so a routed held message would show here.
        await().atMost(DEADLINE).until(() -> chat.marked("control-1"));
        assertThat(chat.owed()).containsExactly("a-ada/control-1");
        assertThat(chat.routedAt("held")).isNull();
        // a periodic pass demonstrably ran after that and skipped it too
        chat.message("control-2", "ch", "u-hugo", "@ada control again");
        await().atMost(DEADLINE).until(() -> chat.marked("control-2"));
        assertThat(chat.owed()).containsExactly("a-ada/control-1", "a-ada/control-2");
        assertThat(chat.routedAt("held")).isNull();

        chat.exec("UPDATE agent_sessions SET ended_at_unix_ms = ? WHERE id = 's-bob'", System.currentTimeMillis());
        await().atMost(DEADLINE).until(() -> chat.marked("held"));

        assertThat(chat.owed()).containsExactly("a-ada/control-1", "a-ada/control-2", "a-ada/held");
        assertThat(describe(TestConnect.consume(3, DEADLINE, topic))).containsExactlyInAnyOrder(
            "control-1->a-ada:OWED", "control-2->a-ada:OWED", "held->a-ada:OWED");
    }

    // ------------------------------------------------------------------------------------------------
    // Recovery-point leg

    @Test
    void recoveryPointLegANotifyTriggersThePassThatALongScanIntervalWouldNot() {
        Chat chat = Chat.create("mrl_notify");
        chat.message("m0", "ch", "u-hugo", "@ada before the start");
        String topic = "mrl-notify-mentions";
        start("mrl-notify", chat, topic, 2, Map.of("mentions.scan.interval.ms", "3600000"));
        await().atMost(DEADLINE).until(() -> chat.marked("m0")); // the start pass ran (one short batch)
        await().atMost(DEADLINE).until(chat::listening);
        // LISTEN taking effect asks for a pass of its own (a NOTIFY sent before it reached no one): let it run
        // before m1 exists. The task waits at most 500 ms when idle, so 1.5 s without a new pass is quiet.
        AtomicLong passes = new AtomicLong(-1);
        await().atMost(DEADLINE).during(Duration.ofMillis(1_500)).pollInterval(Duration.ofMillis(100)).until(() -> {
            long now = (long) RelayMetricsAndRetentionIT.metric("mrl-notify", "mentions", "passes-completed-total");
            return passes.getAndSet(now) == now;
        });

        chat.message("m1", "ch", "u-hugo", "@ada after the start pass");
        // negative control: no NOTIFY, no pass. The window is 4x the task's longest idle wait (500 ms),
        // so a task that scans on its own (per poll, per insert, or on a short interval) is caught.
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
            .until(() -> !chat.marked("m1") && chat.owed().size() == 1);
        assertThat(TestConnect.countRecords(topic)).isEqualTo(1);

        long notifiedAt = System.currentTimeMillis();
        chat.exec("NOTIFY mentions_recovery");
        await().atMost(DEADLINE).until(() -> chat.marked("m1"));

        assertThat(chat.routedAt("m1")).as("marked by the pass the NOTIFY triggered")
            .isGreaterThanOrEqualTo(notifiedAt);
        assertThat(chat.owed()).containsExactly("a-ada/m0", "a-ada/m1");
        List<TestConnect.Received> records = TestConnect.consume(2, DEADLINE, topic);
        assertThat(describe(records)).containsExactlyInAnyOrder("m0->a-ada:OWED", "m1->a-ada:OWED");
        JsonNode m1 = records.stream().map(TestConnect.Received::value)
            .filter(v -> v.get("message_id").asText().equals("m1")).findFirst().orElseThrow();
        assertThat(m1.get("recovered_at").asLong()).isGreaterThanOrEqualTo(notifiedAt);
    }

    // ------------------------------------------------------------------------------------------------
    // Late commit

    @Test
    void lateCommitALowerSeqThatCommitsAfterAHigherOneWasMarkedIsStillRecovered() throws SQLException {
        Chat chat = Chat.create("mrl_late");
        String topic = "mrl-late-mentions";
        try (Connection slow = chat.db.connect()) {
            slow.setAutoCommit(false);
            long lowSeq = Chat.insertMessage(slow, "low", "ch", "u-hugo", Chat.textBlocks("@ada first"));
            long highSeq = chat.message("high", "ch", "u-hugo", "@ada second");
            assertThat(lowSeq).isLessThan(highSeq);

            start("mrl-late", chat, topic, 2, Map.of("mentions.scan.interval.ms", "3600000"));
            await().atMost(DEADLINE).until(() -> chat.marked("high"));
            await().atMost(DEADLINE).until(chat::listening);
            // what a persisted high-water mark would now hold: a cursor past the low seq
            assertThat(chat.queryLong("SELECT max(seq) FROM messages WHERE mentions_routed_at IS NOT NULL"))
                .isGreaterThan(lowSeq);

            slow.commit();
        }
        chat.notifyRecovery();
        await().atMost(DEADLINE).until(() -> chat.marked("low"));

        assertThat(chat.owed()).containsExactly("a-ada/high", "a-ada/low");
        assertThat(describe(TestConnect.consume(2, DEADLINE, topic)))
            .containsExactlyInAnyOrder("high->a-ada:OWED", "low->a-ada:OWED");
    }

    // ------------------------------------------------------------------------------------------------
    // Routing arms, and the wiring with more than one relay task

    @Test
    void routesEveryArmOnceWithReservedPingsExpandedAndTheAuthorExcluded() {
        Chat chat = Chat.create("mrl_arms");
        long now = System.currentTimeMillis();
        chat.channel("mand", true);
        chat.account("a-cy", "cy", "agent", "elsewhere");
        chat.account("a-dee", "dee", "agent", "elsewhere");
        chat.account("a-fay", "fay", "agent", "ch");
        chat.account("a-eve", "eve", "agent", "elsewhere");
        chat.member("ch", "a-cy", false);  // live: STEER
        chat.member("ch", "a-dee", true);  // the author
        chat.member("ch", "a-fay", false); // offline, unsubscribed, but ch is its home: WAKE
        chat.member("mand", "a-ada", false);
        chat.member("mand", "u-hugo", true);
        chat.session("s-cy", "a-cy", now, null);
        // a-ada: offline, unsubscribed, not home: OWED; a-bob: offline, subscribed: WAKE;
        // a-eve is no member, u-hugo is human, @zed sits in a code block
        chat.messageWithBlocks("arms", "ch", "a-dee",
            "[{\"type\":\"text\",\"text\":\"@all standup now, @eve and @hugo too\"},"
                + "{\"type\":\"code\",\"text\":\"@zed\"}]");
        chat.message("mand", "mand", "u-hugo", "ping @Ada.");      // mandatory channel: WAKE, any case, trailing dot
        chat.message("quiet", "ch", "u-hugo", "mail bob@example.com"); // no mention: marked, no record
        String topic = "mrl-arms-mentions";
        start("mrl-arms", chat, topic, 3, Map.of("mentions.scan.interval.ms", "3600000",
            "mentions.session.live.ms", SESSION_LIVE_MS));

        ConnectorStateInfo status = TestConnect.cluster().connectorStatus(connector);
        assertThat(status.tasks()).as("2 relay tasks (tasks.max - 1) + the companion task").hasSize(3);
        assertThat(taskKinds(connector)).containsExactly("relay", "relay", "mentions");

        await().atMost(DEADLINE).until(() -> chat.marked("arms") && chat.marked("mand") && chat.marked("quiet"));
        assertThat(TestConnect.countRecords(topic)).isEqualTo(5);
        assertThat(describe(TestConnect.consume(5, DEADLINE, topic))).containsExactlyInAnyOrder(
            "arms->a-ada:OWED", "arms->a-bob:WAKE", "arms->a-cy:STEER", "arms->a-fay:WAKE",
            "mand->a-ada:WAKE");
        assertThat(chat.owed()).containsExactly("a-ada/arms");
    }

    // ------------------------------------------------------------------------------------------------
    // Never wedges

    @Test
    void aMessageWithUnreadableBlocksStaysUnmarkedWhileTheRestOfItsBatchIsMarkedAndTheTaskRuns() {
        Chat chat = Chat.create("mrl_fault");
        chat.message("good-1", "ch", "u-hugo", "@ada one");
        chat.messageWithBlocks("bad", "ch", "u-hugo", "{\"type\":\"text\",\"text\":\"@ada not an array\"}");
        chat.message("good-2", "ch", "u-hugo", "@ada two");
        String topic = "mrl-fault-mentions";
        start("mrl-fault", chat, topic, 2, Map.of("mentions.scan.interval.ms", "3600000"));

        await().atMost(DEADLINE).until(() -> chat.marked("good-1") && chat.marked("good-2"));
        assertThat(chat.routedAt("bad")).isNull();
        assertThat(chat.owed()).containsExactly("a-ada/good-1", "a-ada/good-2");

        // the next pass retries it (and fails it again), and still recovers what is new
        await().atMost(DEADLINE).until(chat::listening);
        chat.message("good-3", "ch", "u-hugo", "@ada three");
        chat.notifyRecovery();
        await().atMost(DEADLINE).until(() -> chat.marked("good-3"));
        assertThat(chat.routedAt("bad")).isNull();
        assertThat(describe(TestConnect.consume(3, DEADLINE, topic))).containsExactlyInAnyOrder(
            "good-1->a-ada:OWED", "good-2->a-ada:OWED", "good-3->a-ada:OWED");
        ConnectorStateInfo status = TestConnect.cluster().connectorStatus(connector);
        assertThat(status.connector().state()).isEqualTo("RUNNING");
        assertThat(status.tasks()).extracting(ConnectorStateInfo.AbstractState::state).containsOnly("RUNNING");
    }

    // ------------------------------------------------------------------------------------------------
    // Helpers

    /** The connector config: relay with one subscription, mention recovery on, the given overrides. */
    private static Map<String, String> config(Chat chat, String mentionsTopic, int tasks,
                                              Map<String, String> overrides) {
        Map<String, String> cfg = TestConnect.relayConfig(chat.db, "chat", tasks);
        cfg.put("subscription.chat.topic", mentionsTopic.replace("-mentions", "-events"));
        cfg.put("mentions.enabled", "true");
        cfg.put("mentions.topic", mentionsTopic);
        cfg.putAll(overrides);
        return cfg;
    }

    private void start(String name, Chat chat, String mentionsTopic, int tasks, Map<String, String> overrides) {
        connector = name;
        TestConnect.cluster().configureConnector(name, config(chat, mentionsTopic, tasks, overrides));
        awaitRunning(name, tasks);
    }

    static void awaitRunning(String name, int tasks) {
        await().atMost(DEADLINE).ignoreExceptions().until(() -> {
            ConnectorStateInfo s = TestConnect.cluster().connectorStatus(name);
            return "RUNNING".equals(s.connector().state()) && s.tasks().size() == tasks
                && s.tasks().stream().allMatch(t -> "RUNNING".equals(t.state()));
        });
    }

    /** {@code task.kind} of each task config, in task order, as GET /connectors/{name}/tasks shows them. */
    static List<String> taskKinds(String name) {
        Reply reply = WorkerRest.get("connectors/" + name + "/tasks");
        assertThat(reply.status()).isEqualTo(200);
        List<String> kinds = new ArrayList<>();
        for (JsonNode task : reply.json()) {
            kinds.add(task.get("config").path("task.kind").asText("relay"));
        }
        return kinds;
    }

    /** "message_id->key:ACTION" per record. */
    static List<String> describe(List<TestConnect.Received> records) {
        return records.stream().map(r -> r.value().get("message_id").asText() + "->" + r.key() + ":"
            + r.value().get("action").asText()).toList();
    }

    /**
     * A chat in its own database: channel {@code ch} (topic {@code t-ch}) with the human {@code u-hugo}
     * and the agents {@code a-ada} (unsubscribed, home elsewhere: the gap population) and {@code a-bob}
     * (subscribed); no session is live.
     */
    static final class Chat {
        final TestDatabase db;

        private Chat(TestDatabase db) {
            this.db = db;
        }

        static Chat create(String prefix) {
            Chat chat = new Chat(TestPostgres.get().createDatabase(prefix));
            chat.channel("ch", false);
            chat.account("u-hugo", "hugo", "human", "ch");
            chat.account("a-ada", "ada", "agent", "elsewhere");
            chat.account("a-bob", "bob", "agent", "elsewhere");
            chat.member("ch", "u-hugo", true);
            chat.member("ch", "a-ada", false);
            chat.member("ch", "a-bob", true);
            return chat;
        }

        void exec(String sql, Object... params) {
            try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
                for (int i = 0; i < params.length; i++) {
                    ps.setObject(i + 1, params[i]);
                }
                ps.execute();
            } catch (SQLException e) {
                throw new IllegalStateException(sql, e);
            }
        }

        long queryLong(String sql) {
            return db.queryLong(sql);
        }

        void channel(String id, boolean mandatory) {
            exec("INSERT INTO channels (id, name, mandatory_subscription) VALUES (?, ?, ?)", id, "#" + id, mandatory);
            exec("INSERT INTO topics (id, channel_id) VALUES (?, ?)", "t-" + id, id);
        }

        void account(String id, String handle, String kind, String home) {
            exec("INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES (?, ?, ?, ?)", id, handle, kind,
                home);
        }

        void member(String channel, String account, boolean subscribed) {
            exec("INSERT INTO channel_members (channel_id, account_id, subscribed) VALUES (?, ?, ?)", channel, account,
                subscribed);
        }

        void session(String id, String account, long lastSeen, Long ended) {
            exec("INSERT INTO agent_sessions (id, account_id, started_at_unix_ms, last_seen_unix_ms, ended_at_unix_ms) "
                + "VALUES (?, ?, ?, ?, ?)", id, account, lastSeen - 1_000, lastSeen, ended);
        }

        void hold(String message, String session) {
            exec("INSERT INTO held_messages (message_id, session_id) VALUES (?, ?)", message, session);
        }

        static String textBlocks(String text) {
            return "[{\"type\":\"text\",\"text\":\"" + text + "\"}]";
        }

        /** A committed message with one text block; returns its seq. */
        long message(String id, String channel, String author, String text) {
            return messageWithBlocks(id, channel, author, textBlocks(text));
        }

        long messageWithBlocks(String id, String channel, String author, String blocksJson) {
            try (Connection c = db.connect()) {
                return insertMessage(c, id, channel, author, blocksJson);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        /** Inserts on {@code c} (in its transaction, if one is open); returns the seq. */
        static long insertMessage(Connection c, String id, String channel, String author, String blocksJson)
            throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO messages (id, topic_id, author_id, blocks, "
                + "at_unix_ms) VALUES (?, ?, ?, ?::jsonb, ?) RETURNING seq")) {
                ps.setString(1, id);
                ps.setString(2, "t-" + channel);
                ps.setString(3, author);
                ps.setString(4, blocksJson);
                ps.setLong(5, System.currentTimeMillis());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }

        Long routedAt(String message) {
            List<List<Object>> rows = db.query("SELECT mentions_routed_at FROM messages WHERE id = ?", message);
            assertThat(rows).as("message %s", message).hasSize(1);
            Object v = rows.get(0).get(0);
            return v == null ? null : ((Number) v).longValue();
        }

        boolean marked(String message) {
            return routedAt(message) != null;
        }

        /** The owed rows as "agent/message", sorted. */
        Set<String> owed() {
            Set<String> out = new TreeSet<>();
            for (List<Object> row : db.query("SELECT agent_account_id, message_id FROM owed_mentions")) {
                out.add(row.get(0) + "/" + row.get(1));
            }
            return out;
        }

        /** Backend pids of the companion task's LISTEN sessions on this database. */
        List<Integer> listenerPids() {
            return db.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                    + "AND application_name = 'outbox-relay-mentions' AND query LIKE 'LISTEN%'").stream()
                .map(row -> ((Number) row.get(0)).intValue()).toList();
        }

        int listenerPid() {
            List<Integer> pids = listenerPids();
            assertThat(pids).hasSize(1);
            return pids.get(0);
        }

        boolean listening() {
            return !listenerPids().isEmpty();
        }

        /** What the chat server sends at its recovery points; the task must already be listening. */
        void notifyRecovery() {
            await().atMost(DEADLINE).until(this::listening);
            exec("NOTIFY mentions_recovery");
        }
    }
}
