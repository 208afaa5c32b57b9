package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import io.outboxrelay.common.NamedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The housekeeping of an outbox partitioned by day (migration V5; statements in {@code partitions.sql};
 * docs/partitioned-outbox.md): the partitions ahead of time, and retention that drops whole partitions
 * instead of deleting rows. Both run through the table's own SECURITY DEFINER functions, so the relay's role
 * needs no ownership of the table, only EXECUTE on them.
 */
final class PartitionUpkeep {
    private static final NamedSql SQL = NamedSql.load(PartitionUpkeep.class, "partitions.sql");
    /** Days of partitions kept made ahead of today, as V5 makes them at install. */
    static final int DAYS_AHEAD = 7;

    /** A partition past the retention cutoff: dropped, or kept because it holds rows still to fan out. */
    record Retired(String partition, boolean dropped, long pending, long poisoned) {
    }

    private final DataSource dataSource;
    private final NamedSql.Bindable aheadSql;
    private final NamedSql.Bindable dropSql;

    private PartitionUpkeep(DataSource dataSource, String table) {
        this.dataSource = dataSource;
        String ahead = Identifiers.quoteQualified(table + "_partitions_ahead");
        String drop = Identifiers.quoteQualified(table + "_drop_partitions");
        this.aheadSql = SQL.bindable("PartitionsAhead", "", s -> s.replace("{ahead}", ahead));
        this.dropSql = SQL.bindable("DropPartitions", "", s -> s.replace("{drop}", drop));
    }

    /**
     * The upkeep of {@code table} when it is partitioned with V5's functions; null for a plain table, and for
     * one partitioned without them (its partitions are the operator's to make and drop).
     */
    static PartitionUpkeep of(DataSource dataSource, String table) throws SQLException {
        NamedSql.Bindable sql = SQL.bindable("PartitionedTable", "");
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.sql())) {
            sql.set(ps, "table", Identifiers.quoteQualified(table));
            sql.set(ps, "ahead_signature", Identifiers.quoteQualified(table + "_partitions_ahead") + "(integer)");
            sql.set(ps, "drop_signature", Identifiers.quoteQualified(table + "_drop_partitions")
                + "(timestamp with time zone)");
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1) && rs.getBoolean(2) && rs.getBoolean(3)
                    ? new PartitionUpkeep(dataSource, table) : null;
            }
        }
    }

    /** Makes the missing partitions of today and the next {@link #DAYS_AHEAD} days; returns how many. */
    int makeAhead() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(aheadSql.sql())) {
            aheadSql.set(ps, "days", DAYS_AHEAD);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Drops the partitions that ended {@code retentionMs} ago and hold no un-fanned row; each one past it. */
    List<Retired> dropRetained(long retentionMs) throws SQLException {
        List<Retired> out = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(dropSql.sql())) {
            dropSql.set(ps, "retention_ms", retentionMs);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Retired(rs.getString(1), rs.getBoolean(3), rs.getLong(4), rs.getLong(5)));
                }
            }
        }
        return out;
    }
}
