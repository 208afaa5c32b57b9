package io.outboxrelay.mentions;

import io.outboxrelay.common.NamedSql;
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

    private final DataSource dataSource;

    public JdbcMentionStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public List<UnroutedMessage> readUnrouted(long afterSeq, long cutoffUnixMs, long liveSinceUnixMs, int limit)
        throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(SQL.get("ReadUnroutedBatch"))) {
            ps.setLong(1, afterSeq);
            ps.setLong(2, cutoffUnixMs);
            ps.setLong(3, liveSinceUnixMs);
            ps.setInt(4, limit);
            List<UnroutedMessage> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new UnroutedMessage(rs.getString("id"), rs.getLong("seq"), rs.getString("author_id"),
                        rs.getString("channel_id"), rs.getBoolean("mandatory_subscription"), rs.getString("blocks")));
                }
            }
            return out;
        }
    }

    @Override
    public Map<String, List<ChannelMember>> agentMembers(Collection<String> channelIds, long liveSinceUnixMs)
        throws SQLException {
        Map<String, List<ChannelMember>> out = new HashMap<>();
        if (channelIds.isEmpty()) {
            return out;
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(SQL.get("LoadAgentMembers"))) {
            ps.setLong(1, liveSinceUnixMs);
            ps.setArray(2, textArray(c, channelIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ChannelMember m = new ChannelMember(rs.getString("account_id"), rs.getString("handle"), true,
                        rs.getBoolean("subscribed"), rs.getString("home_channel_id"), rs.getBoolean("live"));
                    out.computeIfAbsent(rs.getString("channel_id"), k -> new ArrayList<>()).add(m);
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
}
