package io.outboxrelay.connector;

import io.outboxrelay.common.NamedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * Every statement the relay runs against the outbox table: the lease-committing claim, the
 * set-based stamp (with its receipt NOTIFY in the same transaction), lease release and extension, and
 * poisoning. One instance per task incarnation; its lease owner names the connector, the task and the
 * incarnation ({@code <connector>-<task>#<incarnation>}), so that a task restarted while its previous
 * incarnation is still stopping can neither have its leases released by that one nor release them.
 */
final class OutboxClaimer {
    /** NOTIFY payloads must stay under 8000 bytes; 36-char ids plus a comma each. */
    static final int RECEIPT_IDS_PER_NOTIFY = 200;

    private static final NamedSql SQL = NamedSql.load(OutboxClaimer.class, "outbox-relay.sql");

    private final DataSource dataSource;
    private final String taskOwner;
    private final String owner;
    private final int taskCount;
    private final int taskIndex;
    private final long leaseMs;
    private final String fannedChannel;
    private final String claimSql;
    private final String stampSql;
    private final String releaseSql;
    private final String poisonSql;
    private final String extendSql;
    private final String releaseUnknownSql;
    private final String releasePreviousSql;

    /**
     * @param taskOwner   {@code <connector>-<task id>}, the same for every incarnation of the task
     * @param incarnation tells this start of the task from earlier ones; lowercase hex
     */
    OutboxClaimer(DataSource dataSource, String quotedTable, String taskOwner, String incarnation, int taskCount,
                  int taskIndex, long leaseMs, String fannedChannel) {
        this.dataSource = dataSource;
        if (!incarnation.matches("[0-9a-f]+")) {
            throw new IllegalArgumentException("incarnation must be lowercase hex: " + incarnation);
        }
        this.taskOwner = taskOwner;
        this.owner = taskOwner + "#" + incarnation;
        this.taskCount = taskCount;
        this.taskIndex = taskIndex;
        this.leaseMs = leaseMs;
        this.fannedChannel = fannedChannel;
        this.claimSql = SQL.forTable("ClaimRows", quotedTable);
        this.stampSql = SQL.forTable("StampFannedOut", quotedTable);
        this.releaseSql = SQL.forTable("ReleaseLeases", quotedTable);
        this.poisonSql = SQL.forTable("PoisonRows", quotedTable);
        this.extendSql = SQL.forTable("ExtendLeases", quotedTable);
        this.releaseUnknownSql = SQL.forTable("ReleaseUnknownLeases", quotedTable);
        this.releasePreviousSql = SQL.forTable("ReleasePreviousIncarnations", quotedTable);
    }

    String owner() {
        return owner;
    }

    /**
     * Claims up to {@code limit} rows and commits their lease before returning.
     *
     * @param fresh true for rows never attempted, false for rows attempted before (retried alone)
     */
    List<ClaimedRow> claim(boolean fresh, int limit) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(claimSql)) {
            int i = 0;
            ps.setBoolean(++i, fresh);
            ps.setInt(++i, taskCount);
            ps.setInt(++i, taskCount);
            ps.setInt(++i, taskIndex);
            ps.setInt(++i, limit);
            ps.setString(++i, owner);
            ps.setLong(++i, leaseMs);
            List<ClaimedRow> rows = new ArrayList<>(limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String payload = rs.getString(5);
                    HeadersJson.Parsed headers = HeadersJson.parse(rs.getString(9));
                    rows.add(new ClaimedRow(
                        rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), payload,
                        rs.getTimestamp(6).getTime(), rs.getInt(7), rs.getString(8), utf8Length(payload),
                        headers.type(), headers.keys(), headers.values(), rs.getBoolean(10)));
                }
            }
            return rows;
        }
    }

    /**
     * Stamps acknowledged rows in one statement and, in the same transaction, NOTIFYs their ids on the
     * receipt channel, so a receipt is sent exactly when the stamp is visible.
     *
     * @return how many rows were stamped (rows another claimer already stamped are skipped)
     */
    int stamp(long[] seqs, String[] fanouts, String[] ids) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                int stamped;
                try (PreparedStatement ps = c.prepareStatement(stampSql)) {
                    ps.setArray(1, c.createArrayOf("bigint", box(seqs)));
                    ps.setArray(2, c.createArrayOf("text", fanouts));
                    stamped = ps.executeUpdate();
                }
                if (!fannedChannel.isEmpty() && stamped > 0) {
                    notifyReceipts(c, java.util.Arrays.asList(ids));
                }
                c.commit();
                return stamped;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c);
                throw e;
            }
            // the pool restores auto-commit when the connection is returned
        }
    }

    /** Bytes of {@code s} in UTF-8 (the server's encoding of the payload text), without encoding it. */
    static int utf8Length(String s) {
        int n = s.length();
        int i = 0;
        while (i < n && s.charAt(i) < 0x80) {
            i++; // the common case, ASCII JSON: one byte per char, a loop the JIT keeps tight
        }
        int bytes = i;
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    private void notifyReceipts(Connection c, List<String> ids) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SQL.get("Notify"))) {
            for (int from = 0; from < ids.size(); from += RECEIPT_IDS_PER_NOTIFY) {
                List<String> chunk = ids.subList(from, Math.min(ids.size(), from + RECEIPT_IDS_PER_NOTIFY));
                ps.setString(1, fannedChannel);
                ps.setString(2, String.join(",", chunk));
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /**
     * Releases this task's leases on rows. {@code givebacks[i]} is 1 when the row's records never left
     * the task (its attempt is returned), {@code delaysMs[i]} delays the next claim of a failed row.
     */
    void release(long[] seqs, int[] givebacks, long[] delaysMs, String[] errors) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(releaseSql)) {
            ps.setArray(1, c.createArrayOf("bigint", box(seqs)));
            Integer[] g = new Integer[givebacks.length];
            for (int i = 0; i < g.length; i++) {
                g[i] = givebacks[i];
            }
            ps.setArray(2, c.createArrayOf("int4", g));
            ps.setArray(3, c.createArrayOf("bigint", box(delaysMs)));
            ps.setArray(4, c.createArrayOf("text", errors));
            ps.setString(5, owner);
            ps.executeUpdate();
        }
    }

    /** Gives leases back for an immediate claim (no retry delay, no error); {@code givebacks} as above. */
    void releaseNow(long[] seqs, int[] givebacks) throws SQLException {
        release(seqs, givebacks, new long[seqs.length], new String[seqs.length]);
    }

    /** Poisons rows with a reason each; returns the rows this call poisoned. */
    List<PoisonedRow> poison(long[] seqs, String[] reasons) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(poisonSql)) {
            ps.setArray(1, c.createArrayOf("bigint", box(seqs)));
            ps.setArray(2, c.createArrayOf("text", reasons));
            List<PoisonedRow> out = new ArrayList<>(seqs.length);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new PoisonedRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                        rs.getInt(5), rs.getTimestamp(6).getTime(), rs.getTimestamp(7).getTime(), rs.getString(8)));
                }
            }
            return out;
        }
    }

    /** Renews the lease of rows still in flight. */
    int extendLeases(long[] seqs) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(extendSql)) {
            ps.setLong(1, leaseMs);
            ps.setArray(2, c.createArrayOf("bigint", box(seqs)));
            ps.setString(3, owner);
            return ps.executeUpdate();
        }
    }

    /**
     * Takes back rows that earlier incarnations of this task leased (and rows leased under the task's
     * name by versions without incarnations); returns how many. Their attempt stays counted: an earlier
     * incarnation may have had them in flight.
     */
    int releasePreviousIncarnations() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(releasePreviousSql)) {
            String prefix = taskOwner + "#";
            ps.setString(1, taskOwner);
            ps.setString(2, prefix);
            ps.setString(3, prefix);
            ps.setString(4, owner);
            return ps.executeUpdate();
        }
    }

    /**
     * Gives back rows this incarnation leased except {@code held}: rows of a claim whose commit succeeded
     * while its result was lost with the connection. They never reached Connect, so their attempt is
     * returned, except for rows in {@code keepAttempt}.
     *
     * @return the rows released, with their attempts after the release
     */
    List<Released> releaseUnknownLeases(long[] held, long[] keepAttempt) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(releaseUnknownSql)) {
            ps.setArray(1, c.createArrayOf("bigint", box(keepAttempt)));
            ps.setString(2, owner);
            ps.setArray(3, c.createArrayOf("bigint", box(held)));
            List<Released> released = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    released.add(new Released(rs.getLong(1), rs.getInt(2)));
                }
            }
            return released;
        }
    }

    /** A row given back by {@link #releaseUnknownLeases}, with its attempts after the release. */
    record Released(long seq, int attempts) {
    }

    private static Long[] box(long[] values) {
        Long[] out = new Long[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = values[i];
        }
        return out;
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is broken; the pool discards it and the caller reports the first error
        }
    }
}
