package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import io.outboxrelay.common.NamedSql;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * {@link ReplayStore} on PostgreSQL: the named statements of {@code replay.sql} on {@code <table>_replays} next to
 * the outbox table, under this incarnation's lease owner.
 */
final class JdbcReplayStore implements ReplayStore {
    private static final NamedSql SQL = NamedSql.load(JdbcReplayStore.class, "replay.sql");

    private final DataSource dataSource;
    private final String owner;
    private final String[] subscriptions;
    private final long leaseMs;
    private final int maxRecordBytes;
    private final ClaimedRowReader reader;
    private final NamedSql.Bindable claimSql;
    private final NamedSql.Bindable chunkSql;
    private final NamedSql.Bindable progressSql;
    private final NamedSql.Bindable failedSql;
    private final NamedSql.Bindable releaseSql;

    /**
     * @param table the table as configured ({@code outbox.table}); its requests are {@code <table>_replays}
     * @param owner this incarnation's lease owner ({@link OutboxStore#owner()})
     */
    JdbcReplayStore(DataSource dataSource, String table, String quotedTable, OutboxColumns columns, String owner,
                    List<String> subscriptions, long leaseMs, int maxRecordBytes) {
        this.dataSource = dataSource;
        this.owner = owner;
        this.subscriptions = subscriptions.toArray(new String[0]);
        this.leaseMs = leaseMs;
        this.maxRecordBytes = maxRecordBytes;
        this.reader = new ClaimedRowReader(maxRecordBytes);
        String replays = Identifiers.quoteQualified(table + "_replays");
        java.util.function.UnaryOperator<String> expand = sql -> columns.expand(sql.replace("{replays}", replays));
        this.claimSql = SQL.bindable("ClaimReplay", quotedTable, expand);
        this.chunkSql = SQL.bindable("ReplayChunk", quotedTable, expand);
        this.progressSql = SQL.bindable("ReplayProgress", quotedTable, expand);
        this.failedSql = SQL.bindable("ReplayFailed", quotedTable, expand);
        this.releaseSql = SQL.bindable("ReleaseReplay", quotedTable, expand);
    }

    @Override
    public Request claim(long id) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(claimSql.sql())) {
            Array subs = c.createArrayOf("text", subscriptions);
            claimSql.set(ps, "subscriptions", subs);
            claimSql.set(ps, "owner", owner);
            claimSql.set(ps, "id", id);
            claimSql.set(ps, "lease_ms", leaseMs);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Request(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                    rs.getString(6));
            }
        }
    }

    @Override
    public List<ClaimedRow> chunk(Request request, int limit) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(chunkSql.sql())) {
            chunkSql.set(ps, "id", request.id());
            chunkSql.set(ps, "owner", owner);
            chunkSql.set(ps, "after", request.progressSeq());
            chunkSql.set(ps, "limit", limit);
            chunkSql.set(ps, "max_record_bytes", (long) maxRecordBytes);
            List<ClaimedRow> rows = new ArrayList<>(limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(reader.read(rs));
                }
            }
            return rows;
        }
    }

    @Override
    public boolean progress(long id, long progressSeq, long sent, boolean done) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(progressSql.sql())) {
            progressSql.set(ps, "id", id);
            progressSql.set(ps, "owner", owner);
            progressSql.set(ps, "progress", progressSeq);
            progressSql.set(ps, "sent", sent);
            progressSql.set(ps, "done", done);
            progressSql.set(ps, "lease_ms", leaseMs);
            return ps.executeUpdate() == 1;
        }
    }

    @Override
    public void failed(long id, String error) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(failedSql.sql())) {
            failedSql.set(ps, "id", id);
            failedSql.set(ps, "owner", owner);
            failedSql.set(ps, "error", error);
            ps.executeUpdate();
        }
    }

    @Override
    public void release(long id) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(releaseSql.sql())) {
            releaseSql.set(ps, "id", id);
            releaseSql.set(ps, "owner", owner);
            ps.executeUpdate();
        }
    }
}
