package io.outboxrelay.writer;

import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.testsupport.PostgresServer;
import io.outboxrelay.testsupport.ProjectFiles;
import io.outboxrelay.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * One embedded PostgreSQL 17 per test class ({@link PostgresBuilder}) with {@code schemas/sql/outbox.sql}
 * applied, and a stand-in for the relay's stamp that does exactly what the connector's {@code ClaimRows} stamp plus
 * {@code Notify} statements do: one set-based UPDATE guarded by {@code fanned_out_at IS NULL}, then, in
 * the same transaction, {@code pg_notify} with at most 200 comma-separated ids per notification.
 */
final class TestOutbox implements AutoCloseable {
    static final int IDS_PER_NOTIFY = 200;

    private final LocalPostgres server;
    private final TestDatabase db;

    private TestOutbox(LocalPostgres server, TestDatabase db) {
        this.server = server;
        this.db = db;
    }

    static TestOutbox start() {
        LocalPostgres server = new PostgresBuilder().start();
        TestDatabase db = PostgresServer.of(server).createEmptyDatabase("writer", "");
        db.runScript(ProjectFiles.schemaFile("outbox.sql"));
        return new TestOutbox(server, db);
    }

    ConnectionSource connections() {
        Properties props = new Properties();
        props.setProperty("user", db.user());
        return ConnectionSource.of(db.jdbcUrl(), props);
    }

    Connection connect() throws SQLException {
        return db.connect();
    }

    void execute(String sql) {
        db.execute(sql);
    }

    long queryLong(String sql) throws SQLException {
        try (Connection c = connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Records {@code n} events in one committed transaction. */
    List<RecordedEvent> recordCommitted(OutboxWriter writer, int n) throws SQLException {
        List<RecordedEvent> out = new ArrayList<>(n);
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            for (int i = 0; i < n; i++) {
                out.add(writer.record(c, "test.happened", "subject:" + (i % 7), "{\"n\":" + i + "}"));
            }
            c.commit();
        }
        return out;
    }

    /**
     * Stamps the events as the relay does. With a null channel the notification is left out (a lost
     * receipt). Returns how many notifications were sent.
     */
    int stamp(String quotedTable, List<RecordedEvent> events, String channel) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            Long[] seqs = events.stream().map(RecordedEvent::seq).toArray(Long[]::new);
            String[] fanouts = events.stream()
                .map(e -> "{\"webhooks\": {\"topic\": \"webhooks\", \"partition\": 0, \"offset\": " + e.seq() + "}}")
                .toArray(String[]::new);
            List<String> ids = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + quotedTable + " e"
                + " SET fanned_out_at = now(), fanout = x.fanout, lease_owner = NULL, lease_until = NULL,"
                + " next_attempt_at = NULL FROM unnest(?::bigint[], ?::jsonb[]) AS x(seq, fanout)"
                + " WHERE e.seq = x.seq AND e.fanned_out_at IS NULL RETURNING e.id::text")) {
                ps.setArray(1, c.createArrayOf("bigint", seqs));
                ps.setArray(2, c.createArrayOf("text", fanouts));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getString(1));
                    }
                }
            }
            int notifications = 0;
            if (channel != null) {
                for (int from = 0; from < ids.size(); from += IDS_PER_NOTIFY) {
                    notify(c, channel, String.join(",", ids.subList(from, Math.min(ids.size(), from + IDS_PER_NOTIFY))));
                    notifications++;
                }
            }
            c.commit();
            return notifications;
        }
    }

    int stamp(List<RecordedEvent> events) throws SQLException {
        return stamp("events", events, FanoutReceipts.DEFAULT_CHANNEL);
    }

    /** A NOTIFY on its own, committed (auto-commit). */
    void notifyOnly(String channel, String payload) throws SQLException {
        try (Connection c = connect()) {
            notify(c, channel, payload);
        }
    }

    private static void notify(Connection c, String channel, String payload) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, channel);
            ps.setString(2, payload);
            ps.execute();
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
