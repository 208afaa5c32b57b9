package io.outboxrelay.mentions;

import io.outboxrelay.common.DatabaseText;
import io.outboxrelay.common.NamedSql;
import java.nio.charset.CharacterCodingException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * {@link MentionStore} over JDBC. The SQL lives in {@code mentions.sql} next to this class as named
 * statements; bulk writes take arrays ({@code unnest}), so a batch costs one statement per step.
 * Each call borrows a pooled connection in auto-commit mode.
 */
public final class JdbcMentionStore implements MentionStore {
    private static final NamedSql SQL = NamedSql.load(JdbcMentionStore.class, "mentions.sql");
    /** Expanded once, when the class loads: a placeholder it cannot expand fails there, not in a poll. */
    private static final String READ_UNROUTED = DatabaseText.expand(SQL.get("ReadUnroutedBatch"));
    private static final String LOAD_AGENT_MEMBERS = DatabaseText.expand(SQL.get("LoadAgentMembers"));

    /**
     * The bytes of blocks one batch read brings at most, its first message whole (up to {@link #MAX_MESSAGE_BYTES}):
     * 200 messages of a few megabytes each (a pasted log) would otherwise be held in the worker's heap at once, twice
     * over as Java strings.
     */
    static final long BLOCKS_BYTES_PER_BATCH = 16L << 20;
    /**
     * The most bytes of blocks one message may take as text: a batch's first message comes whole past the batch's
     * budget, but one of hundreds of MB (a pasted dump) would take the worker's heap several times over as bytes,
     * string and parsed tree, fail it, and be read first again after every restart. Such a message is a fault.
     */
    static final long MAX_MESSAGE_BYTES = 32L << 20;

    private final DataSource dataSource;
    private final long blocksBudget;
    private final long maxMessageBytes;

    public JdbcMentionStore(DataSource dataSource) {
        this(dataSource, BLOCKS_BYTES_PER_BATCH);
    }

    JdbcMentionStore(DataSource dataSource, long blocksBudget) {
        this(dataSource, blocksBudget, MAX_MESSAGE_BYTES);
    }

    JdbcMentionStore(DataSource dataSource, long blocksBudget, long maxMessageBytes) {
        this.dataSource = dataSource;
        this.blocksBudget = blocksBudget;
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public List<UnroutedMessage> readUnrouted(long afterSeq, long newestUnixMs, long liveSinceUnixMs, int limit)
        throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(READ_UNROUTED)) {
            ps.setLong(1, afterSeq);
            ps.setLong(2, newestUnixMs);
            ps.setLong(3, liveSinceUnixMs);
            ps.setInt(4, limit);
            ps.setLong(5, blocksBudget);
            ps.setLong(6, maxMessageBytes);
            ps.setLong(7, blocksBudget);
            ps.setLong(8, maxMessageBytes);
            List<UnroutedMessage> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Texts texts = new Texts(rs);
                    String id = texts.get("id", "messages.id");
                    long seq = rs.getLong("seq");
                    String authorId = texts.get("author_id", "messages.author_id");
                    String channelId = texts.get("channel_id", "topics.channel_id");
                    String blocks = texts.get("blocks", "messages.blocks");
                    long bytes = rs.getLong("blocks_bytes");
                    String fault = texts.unreadable != null || bytes <= maxMessageBytes ? texts.unreadable
                        : "its blocks take " + bytes + " bytes as text, more than the " + maxMessageBytes + " a message may"
                            + " (the worker's heap would hold them several times over)";
                    out.add(new UnroutedMessage(id, seq, authorId, channelId, rs.getBoolean("mandatory_subscription"),
                        blocks, fault, rs.getBoolean("deferred")));
                }
            }
            return out;
        }
    }

    @Override
    public Map<String, List<ChannelMember>> agentMembers(WantedMembers wanted, long liveSinceUnixMs) throws SQLException {
        Map<String, List<ChannelMember>> out = new HashMap<>();
        if (wanted.isEmpty()) {
            return out;
        }
        List<String> channels = new ArrayList<>();
        List<String> handles = new ArrayList<>();
        wanted.handlesByChannel().forEach((channel, mentioned) -> mentioned.forEach(handle -> {
            channels.add(channel);
            handles.add(handle);
        }));
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(LOAD_AGENT_MEMBERS)) {
            ps.setArray(1, textArray(c, channels));
            ps.setArray(2, textArray(c, handles));
            ps.setLong(3, liveSinceUnixMs);
            ps.setArray(4, textArray(c, wanted.channels()));
            ps.setArray(5, textArray(c, wanted.wholeChannels()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Texts texts = new Texts(rs);
                    String channelId = texts.get("channel_id", "channel_members.channel_id");
                    ChannelMember m = new ChannelMember(texts.get("account_id", "accounts.id"),
                        texts.get("handle", "accounts.handle"), true,
                        rs.getBoolean("subscribed"), texts.get("home_channel_id", "accounts.home_channel_id"), rs.getBoolean("live"),
                        texts.unreadable);
                    out.computeIfAbsent(channelId, k -> new ArrayList<>()).add(m);
                }
            }
        }
        return out;
    }

    @Override
    public int recordOwed(List<OwedRow> rows, long recordedAtUnixMs) throws SQLException {
        if (rows.isEmpty()) {
            return 0;
        }
        List<String> agents = new ArrayList<>(rows.size());
        List<String> messages = new ArrayList<>(rows.size());
        for (OwedRow row : rows) {
            agents.add(row.agentAccountId());
            messages.add(row.messageId());
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(SQL.get("RecordOwedMentions"))) {
            ps.setLong(1, recordedAtUnixMs);
            ps.setArray(2, textArray(c, agents));
            ps.setArray(3, textArray(c, messages));
            return ps.executeUpdate();
        }
    }

    @Override
    public int markNamed(Collection<MentionOffsets.Named> messages, long routedAtUnixMs) throws SQLException {
        if (messages.isEmpty()) {
            return 0;
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(SQL.get("MarkNamedMentionsRouted"))) {
            ps.setLong(1, routedAtUnixMs);
            ps.setArray(2, c.createArrayOf("bigint", messages.stream().map(MentionOffsets.Named::seq).toArray()));
            ps.setArray(3, textArray(c, messages.stream().map(MentionOffsets.Named::id).toList()));
            return ps.executeUpdate();
        }
    }

    private static Array textArray(Connection c, Collection<String> values) throws SQLException {
        return c.createArrayOf("text", values.toArray(new String[0]));
    }

    /**
     * The texts of one result row as its statement sent them ({@code x.raw}), each read strictly: the first that
     * has no Unicode text is named in {@link #unreadable}, and it and any other such text are read as stand-ins
     * ({@link DatabaseText#standIn}).
     */
    private static final class Texts {
        private final ResultSet rs;
        private final String raw;
        private String unreadable;

        Texts(ResultSet rs) throws SQLException {
            this.rs = rs;
            this.raw = rs.getString("raw");
        }

        /** The text of result column {@code column}, which holds {@code field} (table.column, for the fault). */
        String get(String column, String field) throws SQLException {
            byte[] bytes = rs.getBytes(column);
            if (bytes == null) {
                return null;
            }
            try {
                return DatabaseText.strict(bytes, raw);
            } catch (CharacterCodingException e) {
                if (unreadable == null) {
                    unreadable = DatabaseText.unreadable(field, raw);
                }
                return DatabaseText.standIn(bytes, raw); // equal to no text read: it cannot stand for another account
            }
        }
    }
}
