package io.outboxrelay.mentions;

import static io.outboxrelay.mentions.PostgresFixture.account;
import static io.outboxrelay.mentions.PostgresFixture.channel;
import static io.outboxrelay.mentions.PostgresFixture.exec;
import static io.outboxrelay.mentions.PostgresFixture.member;
import static io.outboxrelay.mentions.PostgresFixture.message;
import static io.outboxrelay.mentions.PostgresFixture.routedAt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
 * The server refuses to send such a text to the driver (22P05) and fails the whole statement, so one such message
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
        String url = chatDatabase("WIN1252");
        JdbcMentionStore store = new JdbcMentionStore(PostgresFixture.relayDataSource(url));
        try (Connection owner = pg.owner(url)) {
            message(owner, "m-\u00e9", "ch", "human", "caf\u00e9 \u20ac @bot", NOW - 10_000);
            messageWithText(owner, "m-bad", "ch", NOT_WIN1252);
            message(owner, "m-3", "ch", "human", "@bot again", NOW - 10_000);

            // the negative control: the old read, the blocks as text, fails for the whole table
            assertThatThrownBy(() -> owner.createStatement().executeQuery("SELECT id, blocks::text FROM messages"))
                .isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("22P05");

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

    @Test
    void anAgentMemberWithAnUnreadableHandleLeavesItsChannelsMessagesUnroutedAndNoOtherChannels()
        throws SQLException {
        String url = chatDatabase("WIN1252");
        JdbcMentionStore store = new JdbcMentionStore(PostgresFixture.relayDataSource(url));
        try (Connection owner = pg.owner(url)) {
            channel(owner, "odd", false);
            exec(owner, "INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES ('odd-bot', "
                + "convert_from('\\x626f7481'::bytea, 'WIN1252'), 'agent', 'odd')");
            member(owner, "odd", "odd-bot", true);
            member(owner, "odd", "bot", true);
            message(owner, "in-odd", "odd", "human", "@bot", NOW - 10_000);
            message(owner, "in-ch", "ch", "human", "@bot", NOW - 10_000);

            List<UnroutedMessage> batch = store.readUnrouted(0, NOW, LIVE_SINCE, 10);
            Map<String, List<ChannelMember>> members = store.agentMembers(Set.of("odd", "ch"), LIVE_SINCE);
            MentionBatchPlan plan = MentionBatchPlan.of(batch, members, Integer.MAX_VALUE);

            assertThat(plan.routed()).extracting(r -> r.message().id()).containsExactly("in-ch");
            assertThat(plan.faults()).singleElement().satisfies(f -> {
                assertThat(f.message().id()).isEqualTo("in-odd");
                assertThat(f.reason()).contains("accounts.handle").contains("WIN1252");
            });
        }
    }

    @Test
    void inASqlAsciiDatabaseBytesThatAreNoUtf8AreAFaultAndUtf8TextIsRead() throws SQLException {
        String url = chatDatabase("SQL_ASCII");
        JdbcMentionStore store = new JdbcMentionStore(PostgresFixture.relayDataSource(url));
        try (Connection owner = pg.owner(url)) {
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
