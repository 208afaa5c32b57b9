package io.outboxrelay.mentions;

import static io.outboxrelay.mentions.PostgresFixture.account;
import static io.outboxrelay.mentions.PostgresFixture.channel;
import static io.outboxrelay.mentions.PostgresFixture.exec;
import static io.outboxrelay.mentions.PostgresFixture.member;
import static io.outboxrelay.mentions.PostgresFixture.message;
import static io.outboxrelay.mentions.PostgresFixture.routedAt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.mentions.MentionStore.OwedRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A message or an agent member whose text has a byte that is no character of the database's encoding (SQL_ASCII
 * stores any bytes; WIN1252 and the other single-byte encodings store the bytes they map to nothing, such as 0x81).
 * The server refuses to send such a text to the driver (22P05; 22021 in SQL_ASCII) and fails the whole statement, so one such message
 * used to fail every batch of every pass and no mention of the database was recovered again. Now the texts come as
 * bytes and are decoded by the task: such a message is left unrouted with its fault named, and the others of the
 * batch are routed and marked.
 */
class MentionTextEncodingIT {
    private static final long NOW = 1_800_000_000_000L;
    private static final long LIVE_SINCE = NOW - 60_000;
    /** "hi " and 0x81, which WIN1252 stores unchecked but maps to no character. */
    private static final String NOT_WIN1252 = "convert_from('\\x686920812062'::bytea, 'WIN1252')";
    /** "hi " and 0xff, which is no UTF-8; SQL_ASCII stores it. */
    private static final String NOT_UTF8 = "convert_from('\\x6869ff'::bytea, 'SQL_ASCII')";
    private static PostgresFixture pg;

    @BeforeAll
    static void startPostgres() {
        pg = new PostgresFixture();
    }

    @AfterAll
    static void stopPostgres() {
        pg.close();
    }

    /** A database in {@code encoding} with the chat tables, an agent "bot" in channel "ch", and the relay login. */
    private static String chatDatabase(String encoding) throws SQLException {
        String url = pg.createDatabaseIn(encoding);
        try (Connection owner = pg.owner(url)) {
            pg.applyMentionsSchema(owner);
            channel(owner, "ch", false);
            account(owner, "bot", "bot", "agent", "ch");
            member(owner, "ch", "bot", true);
        }
        return url;
    }

    /** A chat database's store, as the relay login, and its owner's session. */
    private record Chat(JdbcMentionStore store, Connection owner) implements AutoCloseable {
        static Chat in(String encoding) throws SQLException {
            String url = chatDatabase(encoding);
            return new Chat(new JdbcMentionStore(PostgresFixture.relayDataSource(url)), pg.owner(url));
        }

        @Override
        public void close() throws SQLException {
            owner.close();
        }
    }

    private static long messageWithText(Connection owner, String id, String channelId, String textSql)
        throws SQLException {
        try (Statement st = owner.createStatement()) {
            st.execute("INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) VALUES ('" + id + "', 't-"
                + channelId + "', 'human', ('[{\"type\":\"text\",\"text\":\"' || " + textSql
                + " || ' @bot\"}]')::jsonb, " + (NOW - 10_000) + ")");
        }
        return PostgresFixture.queryLong(owner, "SELECT seq FROM messages WHERE id = ?", id);
    }

    private static UnroutedMessage byId(List<UnroutedMessage> batch, String id) {
        return batch.stream().filter(m -> m.id().equals(id)).findFirst().orElseThrow();
    }

    @Test
    void inAWin1252DatabaseAMessageWithAByteWithoutACharacterIsAFaultAndTheOthersAreRoutedAndMarked()
        throws SQLException {
        try (Chat chat = Chat.in("WIN1252")) {
            Connection owner = chat.owner();
            JdbcMentionStore store = chat.store();
            message(owner, "m-\u00e9", "ch", "human", "caf\u00e9 \u20ac @bot", NOW - 10_000);
            messageWithText(owner, "m-bad", "ch", NOT_WIN1252);
            message(owner, "m-3", "ch", "human", "@bot again", NOW - 10_000);

            // the negative control: the old read, the blocks as text, fails for the whole table
            try (Statement st = owner.createStatement()) {
                assertThatThrownBy(() -> st.executeQuery("SELECT id, blocks::text FROM messages"))
                    .isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState())
                    .isEqualTo("22P05");
            }

            List<UnroutedMessage> batch = store.readUnrouted(0, NOW, LIVE_SINCE, 10);
            assertThat(batch).extracting(UnroutedMessage::id).containsExactly("m-\u00e9", "m-bad", "m-3");
            assertThat(byId(batch, "m-\u00e9").blocksJson()).contains("caf\u00e9 \u20ac @bot");
            assertThat(byId(batch, "m-\u00e9").unreadable()).isNull();
            assertThat(byId(batch, "m-bad").unreadable()).contains("messages.blocks")
                .contains("no character of the database's encoding WIN1252");

            MentionBatchPlan plan = MentionBatchPlan.of(batch, store.agentMembers(Set.of("ch"), LIVE_SINCE), Integer.MAX_VALUE);
            assertThat(plan.routed()).extracting(r -> r.message().id()).containsExactly("m-\u00e9", "m-3");
            assertThat(plan.faults()).extracting(f -> f.message().id()).containsExactly("m-bad");

            assertThat(store.markNamed(plan.routed().stream().map(r -> r.message().named()).toList(), NOW))
                .isEqualTo(2);
            assertThat(routedAt(owner, "m-\u00e9")).isEqualTo(NOW);
            assertThat(routedAt(owner, "m-bad")).isNull();
        }
    }

    /**
     * An agent member with a text that cannot be read: a message that may mention it (a reserved ping, or its handle
     * when that was read) is left unrouted, naming the account and the column, since a stand-in id would owe a
     * mention to an account that does not exist. Messages that cannot reach it are routed or marked as ever.
     */
    @Test
    void anUnreadableAgentMemberLeavesOnlyTheMessagesThatMayMentionItUnrouted() throws SQLException {
        try (Chat chat = Chat.in("WIN1252")) {
            Connection owner = chat.owner();
            JdbcMentionStore store = chat.store();
            channel(owner, "odd", false);
            exec(owner, "INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES ('odd-handle', "
                + "convert_from('\\x626f7481'::bytea, 'WIN1252'), 'agent', 'odd')");
            exec(owner, "INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES ("
                + "convert_from('\\x6f64642d696481'::bytea, 'WIN1252'), 'oddid', 'agent', 'odd')");
            member(owner, "odd", "odd-handle", true);
            exec(owner, "INSERT INTO channel_members (channel_id, account_id, subscribed) SELECT 'odd', id, true"
                + " FROM accounts WHERE handle = 'oddid'");
            member(owner, "odd", "bot", true);
            message(owner, "all-in-odd", "odd", "human", "@all", NOW - 10_000);
            message(owner, "oddid-in-odd", "odd", "human", "@OddId", NOW - 10_000);
            message(owner, "bot-in-odd", "odd", "human", "@bot", NOW - 10_000);
            message(owner, "none-in-odd", "odd", "human", "no one", NOW - 10_000);
            message(owner, "all-in-ch", "ch", "human", "@all", NOW - 10_000);

            List<UnroutedMessage> batch = store.readUnrouted(0, NOW, LIVE_SINCE, 10);
            Map<String, List<ChannelMember>> members = store.agentMembers(Set.of("odd", "ch"), LIVE_SINCE);
            MentionBatchPlan plan = MentionBatchPlan.of(batch, members, Integer.MAX_VALUE);

            assertThat(plan.routed()).extracting(r -> r.message().id()).containsExactly("bot-in-odd", "all-in-ch");
            assertThat(plan.routed()).allSatisfy(r -> assertThat(r.mentions()).extracting(m -> m.member().accountId())
                .containsExactly("bot"));
            assertThat(plan.nothingToRoute()).extracting(MentionOffsets.Named::id).containsExactly("none-in-odd");
            assertThat(plan.faults()).extracting(f -> f.message().id()).containsExactly("all-in-odd", "oddid-in-odd");
            assertThat(plan.faults().get(0).reason()).contains("of channel odd").contains("accounts.")
                .contains("WIN1252");
            assertThat(plan.faults().get(1).reason()).contains("accounts.id").contains("odd-id");

            Map<String, List<ChannelMember>> byHandle = store.agentMembers(
                new WantedMembers(Set.of(), Map.of("odd", Set.of("oddid"))), LIVE_SINCE);
            assertThat(byHandle.get("odd")).as("the handle asked for, and the one that cannot be read, not bot")
                .extracting(ChannelMember::handle).containsExactlyInAnyOrder("oddid", "bot\uFFFD")
                .doesNotContain("bot");
        }
    }

    /** Texts a WIN1252 database holds (é, ø) travel through the members' read, the owed rows and the mark intact. */
    @Test
    void readableTextsOutsideAsciiRoundTripThroughMembersOwedRowsAndTheMark() throws SQLException {
        try (Chat chat = Chat.in("WIN1252")) {
            Connection owner = chat.owner();
            JdbcMentionStore store = chat.store();
            channel(owner, "sal\u00f3n", false);
            account(owner, "agent-\u00f8", "ole", "agent", "elsewhere");
            member(owner, "sal\u00f3n", "agent-\u00f8", false); // offline, not subscribed, not home: OWED
            message(owner, "m-\u00e9", "sal\u00f3n", "human", "hej @ole", NOW - 10_000);
            message(owner, "m-all", "sal\u00f3n", "human", "@all", NOW - 10_000);

            List<UnroutedMessage> batch = store.readUnrouted(0, NOW, LIVE_SINCE, 10);
            assertThat(batch).extracting(UnroutedMessage::channelId).containsOnly("sal\u00f3n");
            MentionBatchPlan plan = MentionBatchPlan.of(batch,
                store.agentMembers(Set.of("sal\u00f3n"), LIVE_SINCE), Integer.MAX_VALUE);
            assertThat(plan.faults()).isEmpty();
            assertThat(plan.owed()).extracting(OwedRow::agentAccountId).containsOnly("agent-\u00f8");

            assertThat(store.recordOwed(plan.owed(), NOW)).isEqualTo(2);
            assertThat(PostgresFixture.queryLong(owner,
                "SELECT count(*) FROM owed_mentions WHERE agent_account_id = ? AND message_id = ?", "agent-\u00f8",
                "m-\u00e9")).isEqualTo(1);
            assertThat(store.markNamed(List.of(batch.get(0).named(), batch.get(1).named()), NOW)).isEqualTo(2);
        }
    }

    @Test
    void aMessageWhoseIdCannotBeReadIsAFaultAndTheOthersAreRead() throws SQLException {
        try (Chat chat = Chat.in("WIN1252")) {
            Connection owner = chat.owner();
            JdbcMentionStore store = chat.store();
            exec(owner, "INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) VALUES ("
                + "convert_from('\\x6d81'::bytea, 'WIN1252'), 't-ch', 'human', '[{\"type\":\"text\",\"text\":\"@bot\"}]',"
                + (NOW - 10_000) + ")");
            message(owner, "m-2", "ch", "human", "@bot", NOW - 10_000);

            List<UnroutedMessage> batch = store.readUnrouted(0, NOW, LIVE_SINCE, 10);
            MentionBatchPlan plan = MentionBatchPlan.of(batch, store.agentMembers(Set.of("ch"), LIVE_SINCE),
                Integer.MAX_VALUE);

            assertThat(plan.routed()).extracting(r -> r.message().id()).containsExactly("m-2");
            assertThat(plan.faults()).singleElement().satisfies(f -> assertThat(f.reason()).contains("messages.id"));
        }
    }

    @Test
    void inASqlAsciiDatabaseBytesThatAreNoUtf8AreAFaultAndUtf8TextIsRead() throws SQLException {
        try (Chat chat = Chat.in("SQL_ASCII")) {
            Connection owner = chat.owner();
            JdbcMentionStore store = chat.store();
            message(owner, "m-1", "ch", "human", "caf\u00e9 @bot", NOW - 10_000);
            messageWithText(owner, "m-bad", "ch", NOT_UTF8);

            List<UnroutedMessage> batch = store.readUnrouted(0, NOW, LIVE_SINCE, 10);

            assertThat(byId(batch, "m-1").blocksJson()).contains("caf\u00e9 @bot");
            assertThat(byId(batch, "m-bad").unreadable()).contains("messages.blocks").contains("not valid UTF-8");
            MentionBatchPlan plan = MentionBatchPlan.of(batch, store.agentMembers(Set.of("ch"), LIVE_SINCE), Integer.MAX_VALUE);
            assertThat(plan.routed()).extracting(r -> r.message().id()).containsExactly("m-1");
            assertThat(plan.faults()).extracting(f -> f.message().id()).containsExactly("m-bad");
        }
    }
}
