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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.mentions.MentionStore.OwedRow;
import io.outboxrelay.testsupport.ProjectFiles;
import io.outboxrelay.testsupport.SqlScript;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The store's SQL against a real PostgreSQL, logged in as a least-privilege member of
 * {@code outbox_relay}: guards the scan predicate (marker, pass-local floor, cutoff, held-by-live-session
 * skip), member loading with liveness, idempotent owed rows, the guarded mark, and the grants of
 * schemas/sql/mentions.sql.
 */
class JdbcMentionStoreIT {
    private static final long NOW = 1_800_000_000_000L;
    private static final long LIVE_SINCE = NOW - 60_000;
    private static PostgresFixture pg;

    private Connection owner;
    private JdbcMentionStore store;

    @BeforeAll
    static void startPostgres() {
        pg = new PostgresFixture();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        pg.close();
    }

    @BeforeEach
    void freshDatabase() throws SQLException {
        String url = pg.createDatabase();
        owner = pg.owner(url);
        pg.applyMentionsSchema(owner);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser(PostgresFixture.RELAY_USER);
        ds.setPassword(PostgresFixture.RELAY_PASSWORD);
        store = new JdbcMentionStore(ds);
        channel(owner, "ch", false);
        channel(owner, "ops", true);
    }

    @AfterEach
    void close() throws SQLException {
        owner.close();
    }

    private static List<String> ids(List<UnroutedMessage> batch) {
        return batch.stream().map(UnroutedMessage::id).toList();
    }

    @Test
    void appliesTheSchemaAgainWithoutError() throws SQLException {
        SqlScript.run(owner, ProjectFiles.schemaFile("mentions.sql"));

        assertThat(queryLong(owner, "SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_mentions_unrouted_idx'"))
            .isEqualTo(1);
    }

    @Test
    void readsUnroutedMessagesInSeqOrderAboveTheFloorUpToTheLimit() throws SQLException {
        long s1 = message(owner, "m1", "ch", "u", "a", NOW);
        long s2 = message(owner, "m2", "ops", "u", "b", NOW);
        message(owner, "m3", "ch", "u", "c", NOW);
        message(owner, "m4", "ch", "u", "d", NOW);
        exec(owner, "UPDATE messages SET mentions_routed_at = 1 WHERE id = 'm3'");

        assertThat(ids(store.readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 10))).containsExactly("m1", "m2", "m4");
        assertThat(ids(store.readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 2))).containsExactly("m1", "m2");
        assertThat(ids(store.readUnrouted(s2, Long.MAX_VALUE, LIVE_SINCE, 10))).containsExactly("m4");

        UnroutedMessage m2 = store.readUnrouted(s1, Long.MAX_VALUE, LIVE_SINCE, 1).get(0);
        assertThat(m2).isEqualTo(new UnroutedMessage("m2", s2, "u", "ops", true,
            "[{\"text\": \"b\", \"type\": \"text\"}]"));
    }

    /**
     * A message that would take the batch's blocks past the budget comes without them (deferred, read again with the
     * next batch); the first comes whole however large. Each blocks text here is 31 bytes as jsonb prints it.
     */
    @Test
    void readsBlocksUpToTheBudgetAndDefersTheMessagesPastIt() throws SQLException {
        message(owner, "m1", "ch", "u", "a", NOW);
        message(owner, "m2", "ch", "u", "b", NOW);
        message(owner, "m3", "ch", "u", "c", NOW);
        String url = owner.getMetaData().getURL();

        List<UnroutedMessage> batch = new JdbcMentionStore(PostgresFixture.relayDataSource(url), 62)
            .readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 10);

        assertThat(ids(batch)).containsExactly("m1", "m2", "m3");
        assertThat(batch).extracting(UnroutedMessage::deferred).as("62 bytes: two").containsExactly(false, false, true);
        assertThat(batch.get(1).blocksJson()).isEqualTo("[{\"text\": \"b\", \"type\": \"text\"}]");
        assertThat(batch.get(2).blocksJson()).isNull();
        assertThat(new JdbcMentionStore(PostgresFixture.relayDataSource(url), 61)
            .readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 10)).extracting(UnroutedMessage::deferred)
            .as("61 bytes: one").containsExactly(false, true, true);
        assertThat(new JdbcMentionStore(PostgresFixture.relayDataSource(url), 10)
            .readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 10)).extracting(UnroutedMessage::deferred)
            .as("the first whole, even above the budget").containsExactly(false, true, true);
        assertThat(store.readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 10)).extracting(UnroutedMessage::deferred)
            .as("the default budget: 16 MiB").containsOnly(false);
    }

    /**
     * Found by review: every read turned the blocks of every message under its limit into text, the deferred ones
     * too, so a batch of large messages was converted again at each read (some GB of them: past the statement
     * timeout, every pass). Blocks whose stored size already puts the batch past the budget are not read from TOAST
     * now; the counter's control is the same read with a budget they fit in.
     */
    @Test
    void aReadDoesNotFetchTheBlocksOfMessagesItDefers() throws SQLException {
        message(owner, "m1", "ch", "u", "a", NOW);
        for (String id : List.of("big2", "big3", "big4")) {
            exec(owner, "INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) SELECT ?, 't-ch', 'u',"
                + " jsonb_build_array(jsonb_build_object('type', 'text', 'text', string_agg(md5(? || i), ''))), ?"
                + " FROM generate_series(1, 20000) i", id, id, NOW);
        }
        assertThat(queryLong(owner, "SELECT min(pg_column_size(blocks)) FROM messages WHERE id LIKE 'big%'"))
            .as("stored out of line, above the 8 kB read anyway").isGreaterThan(100_000);

        Read deferring = readInATransaction(100_000);
        assertThat(deferring.deferred()).containsExactly(false, true, true, true);
        assertThat(deferring.toastBlocksFetched()).as("the three deferred").isZero();
        Read whole = readInATransaction(10L << 20);
        assertThat(whole.deferred()).containsExactly(false, false, false, false);
        assertThat(whole.toastBlocksFetched()).as("all four read whole, each blocks fetched once")
            .isGreaterThan(100).isLessThanOrEqualTo(toastBlocksOfOnePlainRead());

        exec(owner, "UPDATE messages SET mentions_routed_at = 1 WHERE id = 'm1'");
        List<UnroutedMessage> next = readInATransaction(100_000).batch();
        assertThat(next).extracting(UnroutedMessage::deferred).as("a first message comes whole past the budget")
            .containsExactly(false, true, true);
        assertThat(next.get(0).blocksJson()).hasSizeGreaterThan(600_000);
    }

    /**
     * Found by review: the bound on what a read converts is on the blocks' stored, compressed size, and one line
     * repeated compresses some hundredfold, so such messages were all converted and then deferred. At most 16 messages
     * stored out of line are converted a read.
     */
    @Test
    void aReadConvertsAtMost16LargeMessagesHoweverWellTheyCompress() throws SQLException {
        for (int i = 1; i <= 20; i++) {
            exec(owner, "INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) SELECT ?, 't-ch', 'u',"
                + " jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('log line ', 250000))), ?",
                "log" + i, NOW);
        }
        assertThat(queryLong(owner, "SELECT max(pg_column_size(blocks)) FROM messages")).as("2.25 MB as text")
            .isBetween(8_193L, 100_000L);

        Read read = readInATransaction(10L << 20);

        assertThat(read.deferred()).as("four fit 10 MiB").containsExactly(false, false, false, false, true, true, true,
            true, true, true, true, true, true, true, true, true, true, true, true, true);
        assertThat(read.toastBlocksFetched() * 20).as("16 of 20 converted").isPositive()
            .isLessThanOrEqualTo(toastBlocksOfOnePlainRead() * 16);
    }

    /** A batch read with {@code budget} in a transaction of its own, and the TOAST blocks it fetched. */
    private record Read(List<UnroutedMessage> batch, long toastBlocksFetched) {
        List<Boolean> deferred() {
            return batch.stream().map(UnroutedMessage::deferred).toList();
        }
    }

    private Read readInATransaction(long budget) throws SQLException {
        try (Connection session = PostgresFixture.relayDataSource(owner.getMetaData().getURL()).getConnection()) {
            session.setAutoCommit(false);
            DataSource thisSession = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("getConnection")) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                        (p, m, a) -> m.getName().equals("close") ? null : m.invoke(session, a));
                });
            List<UnroutedMessage> batch = new JdbcMentionStore(thisSession, budget)
                .readUnrouted(Long.MIN_VALUE, Long.MAX_VALUE, LIVE_SINCE, 100);
            long fetched = toastBlocksFetched(session);
            session.rollback();
            return new Read(batch, fetched);
        }
    }

    /** The TOAST blocks that reading every message's blocks once as text fetches: the counter's control. */
    private long toastBlocksOfOnePlainRead() throws SQLException {
        try (Connection session = PostgresFixture.relayDataSource(owner.getMetaData().getURL()).getConnection()) {
            session.setAutoCommit(false);
            queryLong(session, "SELECT sum(octet_length(blocks::text)) FROM messages WHERE mentions_routed_at IS NULL");
            long fetched = toastBlocksFetched(session);
            session.rollback();
            return fetched;
        }
    }

    private static long toastBlocksFetched(Connection session) throws SQLException {
        return queryLong(session, "SELECT pg_stat_get_xact_blocks_fetched(reltoastrelid) FROM pg_class"
            + " WHERE oid = 'messages'::regclass");
    }

    /**
     * Found by review: a batch's first message came whole however large, so one of some hundred MB failed the
     * worker's heap, and every restart read it first again. Past a cap its size comes instead, and it is a fault.
     */
    @Test
    void aMessageLargerThanAMessageMayIsAFaultNotRead() throws SQLException {
        message(owner, "m1", "ch", "u", "a", NOW);
        message(owner, "m2", "ch", "u", "b", NOW);
        String url = owner.getMetaData().getURL();

        List<UnroutedMessage> batch = new JdbcMentionStore(PostgresFixture.relayDataSource(url), 1_000, 30)
            .readUnrouted(Long.MIN_VALUE, Long.MAX_VALUE, LIVE_SINCE, 10);

        assertThat(batch).extracting(UnroutedMessage::blocksJson).containsExactly(null, null);
        assertThat(batch).extracting(UnroutedMessage::deferred).containsExactly(false, false);
        assertThat(batch).extracting(UnroutedMessage::unreadable).allSatisfy(reason -> assertThat(reason)
            .isEqualTo("its blocks take 31 bytes as text, more than the 30 a message may (the worker's heap would hold"
                + " them several times over)"));
        assertThat(MentionBatchPlan.of(batch, Map.of(), 10).faults()).hasSize(2);
        assertThat(new JdbcMentionStore(PostgresFixture.relayDataSource(url), 1_000, 31)
            .readUnrouted(Long.MIN_VALUE, Long.MAX_VALUE, LIVE_SINCE, 10)).extracting(UnroutedMessage::unreadable)
            .as("31 bytes: read").containsOnlyNulls();
    }

    /** Found by review: a message past the cap took up the batch's budget, so the rest of its batch came deferred. */
    @Test
    void aMessagePastTheCapTakesNothingOfTheBudget() throws SQLException {
        message(owner, "m1", "ch", "u", "a much longer message than the next", NOW); // 65 bytes as jsonb prints it
        message(owner, "m2", "ch", "u", "b", NOW); // 31

        List<UnroutedMessage> batch = new JdbcMentionStore(PostgresFixture.relayDataSource(owner.getMetaData().getURL()),
            40, 40).readUnrouted(Long.MIN_VALUE, Long.MAX_VALUE, LIVE_SINCE, 10);

        assertThat(batch).extracting(UnroutedMessage::unreadable).first().asString().contains("65 bytes");
        assertThat(batch).extracting(UnroutedMessage::deferred).containsExactly(false, false);
        assertThat(batch.get(1).blocksJson()).isNotNull();
    }

    /** A NULL blocks (a table that allows it) comes as NULL, not deferred: the plan makes it a fault. */
    @Test
    void aNullBlocksComesReadNotDeferred() throws SQLException {
        exec(owner, "ALTER TABLE messages ALTER COLUMN blocks DROP NOT NULL");
        exec(owner, "INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) VALUES ('n', 't-ch', 'u', NULL, ?)",
            NOW);
        message(owner, "m2", "ch", "u", "b", NOW);

        List<UnroutedMessage> batch = store.readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 10);

        assertThat(batch).extracting(UnroutedMessage::blocksJson).first().isNull();
        assertThat(batch).extracting(UnroutedMessage::deferred).containsExactly(false, false);
    }

    /** Found by review: a pass started its floor at seq 0 and read below a cutoff, so these were read by none. */
    @Test
    void aFullPassReadsASeqOfZeroOrBelowAndATimeAtTheTopOfItsRange() throws SQLException {
        exec(owner, "INSERT INTO messages (id, seq, topic_id, author_id, blocks, at_unix_ms) VALUES"
            + " ('below', -5, 't-ch', 'u', '[]', 1), ('zero', 0, 't-ch', 'u', '[]', 1),"
            + " ('latest', 7, 't-ch', 'u', '[]', 9223372036854775807)");

        assertThat(ids(store.readUnrouted(Long.MIN_VALUE, Long.MAX_VALUE, LIVE_SINCE, 10)))
            .containsExactly("below", "zero", "latest");
    }

    @Test
    void readsOnlyMessagesStrictlyOlderThanTheCutoff() throws SQLException {
        message(owner, "old", "ch", "u", "a", NOW - 60_000);
        message(owner, "just-old-enough", "ch", "u", "b", NOW - 30_001);
        message(owner, "exactly-min-age", "ch", "u", "c", NOW - 30_000); // not yet "older than" the minimum
        message(owner, "young", "ch", "u", "d", NOW);

        // the task's newest for a minimum age of 30 s: strictly older than it
        assertThat(ids(store.readUnrouted(0, NOW - 30_000 - 1, LIVE_SINCE, 10))).containsExactly("old", "just-old-enough");
    }

    @Test
    void skipsAMessageHeldByALiveSessionButScansOneHeldByAnEndedOrStaleSession() throws SQLException {
        account(owner, "a-1", "ada", "agent", null);
        session(owner, "live", "a-1", NOW, null);
        session(owner, "ended", "a-1", NOW, NOW - 1);
        session(owner, "stale", "a-1", NOW - 120_000, null);
        message(owner, "held-live", "ch", "a-1", "x", NOW);
        message(owner, "held-ended", "ch", "a-1", "x", NOW);
        message(owner, "held-stale", "ch", "a-1", "x", NOW);
        message(owner, "held-unknown", "ch", "a-1", "x", NOW);
        hold(owner, "held-live", "live");
        hold(owner, "held-ended", "ended");
        hold(owner, "held-stale", "stale");
        hold(owner, "held-unknown", "no-such-session");

        assertThat(ids(store.readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 10)))
            .containsExactly("held-ended", "held-stale", "held-unknown");
    }

    @Test
    void loadsOnlyAgentMembersOfTheAskedChannelsWithTheirLiveFlag() throws SQLException {
        account(owner, "a-live", "live", "agent", "ch");
        account(owner, "a-stale", "stale", "agent", null);
        account(owner, "a-ended", "ended", "agent", null);
        account(owner, "a-ops", "opsbot", "agent", null);
        account(owner, "h-1", "hugo", "human", null);
        member(owner, "ch", "a-live", false);
        member(owner, "ch", "a-stale", true);
        member(owner, "ch", "a-ended", false);
        member(owner, "ch", "h-1", true);
        member(owner, "ops", "a-ops", false);
        session(owner, "s1", "a-live", NOW - 10, null);
        session(owner, "s2", "a-stale", NOW - 120_000, null);
        session(owner, "s3", "a-ended", NOW, NOW);

        Map<String, List<ChannelMember>> members = store.agentMembers(List.of("ch", "nobody"), LIVE_SINCE);

        assertThat(members).containsOnlyKeys("ch");
        assertThat(members.get("ch")).containsExactly(
            new ChannelMember("a-ended", "ended", true, false, null, false),
            new ChannelMember("a-live", "live", true, false, "ch", true),
            new ChannelMember("a-stale", "stale", true, true, null, false));
    }

    /**
     * Found by review: a pass loaded every agent member of every channel of its batch, mentioned or not (200
     * channels of 10,000 agents: 2,000,000 members in the heap for 200 mentions). Now the members a mention can
     * reach: by handle, ASCII letters in any case; every agent for a ping of all; any handle outside the grammar's
     * characters, for the policy to decide. Whatever comes, the policy routes as it did with every member loaded.
     */
    @Test
    void loadsTheMembersTheMentionsCanReachAndRoutesAsWithAllOfThem() throws SQLException {
        channel(owner, "big", false);
        for (String[] a : new String[][] {{"a-ada", "Ada"}, {"a-bob", "bob"}, {"a-dot", "bob.smith-2"},
            {"a-kelvin", "\u212Aate"}, {"a-kate", "kate"}, {"a-zoe", "Zoe"}, {"h-ann", "ann"}}) {
            account(owner, a[0], a[1], a[0].startsWith("a-") ? "agent" : "human", null);
            member(owner, "ch", a[0], false);
            member(owner, "big", a[0], true);
        }
        for (int i = 0; i < 500; i++) {
            account(owner, "a-" + i, "agent" + i, "agent", null);
            member(owner, "big", "a-" + i, false);
        }
        account(owner, "a-ops", "ops", "agent", null);
        member(owner, "ops", "a-ops", false);
        member(owner, "ops", "a-bob", false);
        member(owner, "ops", "h-ann", false);
        WantedMembers wanted = new WantedMembers(Set.of("ops"), Map.of("ch", Set.of("ada", "bob.smith-2", "kate", "ann"),
            "big", Set.of("zoe", "agent7")));

        Map<String, List<ChannelMember>> members = store.agentMembers(wanted, LIVE_SINCE);

        assertThat(members.get("ch")).extracting(ChannelMember::accountId)
            .as("Ada in any case, the Kelvin sign's handle as outside the grammar, never a human")
            .containsExactlyInAnyOrder("a-ada", "a-dot", "a-kate", "a-kelvin");
        assertThat(members.get("big")).extracting(ChannelMember::accountId)
            .containsExactlyInAnyOrder("a-zoe", "a-7", "a-kelvin");
        assertThat(members.get("ops")).as("a ping of all: every agent").extracting(ChannelMember::accountId)
            .containsExactlyInAnyOrder("a-bob", "a-ops");
        assertThat(members).containsOnlyKeys("ch", "big", "ops");
        Map<String, List<ChannelMember>> all = store.agentMembers(List.of("ch", "big"), LIVE_SINCE);
        assertThat(all.get("big")).as("the control: every agent").hasSize(506);
        Map<String, List<String>> mentionedIn = Map.of("ch", List.of("ADA", "Bob.Smith-2", "kate", "ann", "zoe"),
            "big", List.of("zoe", "Agent7"));
        mentionedIn.forEach((channel, mentioned) -> {
            List<String> reached = mentioned.stream().filter(h -> wanted.handlesByChannel().get(channel)
                .contains(h.toLowerCase(Locale.ROOT))).toList();
            assertThat(MentionPolicy.route(reached, members.get(channel), false, channel, "u")).as(channel)
                .isEqualTo(MentionPolicy.route(reached, all.get(channel), false, channel, "u"))
                .hasSizeGreaterThan(1);
        });
    }

    @Test
    void recordsOwedRowsOnceAndKeepsTheFirstRecordingTime() throws SQLException {
        List<OwedRow> rows = List.of(new OwedRow("a-1", "m1"), new OwedRow("a-2", "m1"));

        assertThat(store.recordOwed(rows, NOW)).isEqualTo(2);
        assertThat(store.recordOwed(List.of(new OwedRow("a-1", "m1"), new OwedRow("a-1", "m2")), NOW + 5)).isEqualTo(1);

        assertThat(queryLong(owner, "SELECT recorded_at_unix_ms FROM owed_mentions WHERE agent_account_id = 'a-1' "
            + "AND message_id = 'm1'")).isEqualTo(NOW);
        assertThat(queryLong(owner, "SELECT count(*) FROM owed_mentions")).isEqualTo(3);
    }

    @Test
    void marksOnlyMessagesThatAreStillUnrouted() throws SQLException {
        message(owner, "m1", "ch", "u", "a", NOW);
        message(owner, "m2", "ch", "u", "b", NOW);
        exec(owner, "UPDATE messages SET mentions_routed_at = 42 WHERE id = 'm2'"); // the server got there first

        long seq1 = queryLong(owner, "SELECT seq FROM messages WHERE id = 'm1'");
        long seq2 = queryLong(owner, "SELECT seq FROM messages WHERE id = 'm2'");
        assertThat(store.markNamed(List.of(new MentionOffsets.Named(seq1, "m1"), new MentionOffsets.Named(seq2, "m2"),
            new MentionOffsets.Named(seq2 + 1, "missing")), NOW)).isEqualTo(1);

        assertThat(routedAt(owner, "m1")).isEqualTo(NOW);
        assertThat(routedAt(owner, "m2")).isEqualTo(42L);
    }

    /** At start, the messages a committed offset names: only where seq and id both match, and still unrouted. */
    @Test
    void marksANamedMessageOnlyWhenItsSeqAndIdBothMatch() throws SQLException {
        message(owner, "m1", "ch", "u", "a", NOW);
        message(owner, "m2", "ch", "u", "b", NOW);
        message(owner, "m3", "ch", "u", "c", NOW);
        exec(owner, "UPDATE messages SET mentions_routed_at = 42 WHERE id = 'm3'");
        long seq1 = queryLong(owner, "SELECT seq FROM messages WHERE id = 'm1'");
        long seq2 = queryLong(owner, "SELECT seq FROM messages WHERE id = 'm2'");
        long seq3 = queryLong(owner, "SELECT seq FROM messages WHERE id = 'm3'");

        assertThat(store.markNamed(List.of(new MentionOffsets.Named(seq1, "m1"), new MentionOffsets.Named(seq2 + 100, "m2"),
            new MentionOffsets.Named(seq3, "m3")), NOW)).isEqualTo(1);

        assertThat(routedAt(owner, "m1")).isEqualTo(NOW);
        assertThat(routedAt(owner, "m2")).as("another message under that id now").isNull();
        assertThat(routedAt(owner, "m3")).isEqualTo(42L);
        assertThat(store.markNamed(List.of(), NOW)).isZero();
    }

    @Test
    void grantsTheRelayRoleNothingBeyondWhatThePassNeeds() throws SQLException {
        message(owner, "m1", "ch", "u", "a", NOW);
        try (Connection relay = pg.relay(owner.getMetaData().getURL())) {
            assertThatThrownBy(() -> exec(relay, "UPDATE messages SET blocks = '[]'"))
                .isInstanceOf(SQLException.class).hasMessageContaining("permission denied");
            assertThatThrownBy(() -> exec(relay, "DELETE FROM owed_mentions"))
                .isInstanceOf(SQLException.class).hasMessageContaining("permission denied");
            assertThatThrownBy(() -> exec(relay, "INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) "
                + "VALUES ('x', 't-ch', 'u', '[]', 0)"))
                .isInstanceOf(SQLException.class).hasMessageContaining("permission denied");
        }
    }
}
