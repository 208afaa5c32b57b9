package io.outboxrelay.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link OutboxWriter} against a real PostgreSQL: the event shares the fate of the caller's
 * transaction, headers survive the trip through jsonb, and a configured table name is an identifier,
 * never SQL.
 */
class OutboxWriterTest {
    private static final String HOSTILE = "events\"; DROP TABLE events; --";

    private static TestOutbox db;
    private final OutboxWriter writer = new OutboxWriter();

    @BeforeAll
    static void start() {
        db = TestOutbox.start();
    }

    @AfterAll
    static void stop() throws Exception {
        db.close();
    }

    @Test
    void recordsTheEventInTheCallersTransactionVisibleOnlyAfterCommit() throws Exception {
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            RecordedEvent e = writer.record(tx, "supplier.connected", "supplier:42", "{\"supplierId\": 42}",
                Map.of("traceparent", "00-abc-def-01"));
            assertThat(rowCount(e.id())).as("invisible to others before commit").isZero();
            assertThat(tx.getAutoCommit()).isFalse();
            tx.commit();

            try (PreparedStatement ps = tx.prepareStatement("SELECT seq, type, subject, payload = '{\"supplierId\": 42}',"
                + " headers ->> 'traceparent', fanned_out_at IS NULL FROM events WHERE id = ?")) {
                ps.setObject(1, e.id());
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).isEqualTo(e.seq());
                    assertThat(rs.getString(2)).isEqualTo("supplier.connected");
                    assertThat(rs.getString(3)).isEqualTo("supplier:42");
                    assertThat(rs.getBoolean(4)).as("payload stored as jsonb").isTrue();
                    assertThat(rs.getString(5)).isEqualTo("00-abc-def-01");
                    assertThat(rs.getBoolean(6)).as("pending for the relay").isTrue();
                }
            }
        }
    }

    @Test
    void aRolledBackTransactionLeavesNoEvent() throws Exception {
        RecordedEvent e;
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            e = writer.record(tx, "order.placed", "order:1", "{}");
            tx.rollback();
        }
        assertThat(rowCount(e.id())).isZero();
    }

    @Test
    void refusesAnAutoCommitConnectionBecauseTheRowWouldCommitAlone() throws Exception {
        long before = db.queryLong("SELECT count(*) FROM events");
        try (Connection c = db.connect()) {
            assertThatThrownBy(() -> writer.record(c, "order.placed", "order:1", "{}"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("setAutoCommit(false)");
        }
        assertThat(db.queryLong("SELECT count(*) FROM events")).isEqualTo(before);
    }

    @Test
    void headersSurviveJsonbIncludingCharactersThatNeedEscaping() throws Exception {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("quote\"key", "a \"quoted\" value");
        headers.put("backslash", "C:\\path\\n");
        headers.put("controls", "line1\nline2\ttab\r\u0001\u001f\b\f");
        headers.put("unicode", "Grüße 東京 \uD83D\uDE80 \u2028");
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            RecordedEvent e = writer.record(tx, "t", "s", null, headers);
            RecordedEvent bare = writer.record(tx, "t", "s", null, Map.of());
            tx.commit();
            for (Map.Entry<String, String> h : headers.entrySet()) {
                try (PreparedStatement ps = tx.prepareStatement("SELECT headers ->> ? FROM events WHERE id = ?")) {
                    ps.setString(1, h.getKey());
                    ps.setObject(2, e.id());
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getString(1)).as(h.getKey()).isEqualTo(h.getValue());
                    }
                }
            }
            try (PreparedStatement ps = tx.prepareStatement(
                "SELECT payload::text, headers IS NULL FROM events WHERE id = ?")) {
                ps.setObject(1, bare.id());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getString(1)).as("null payload means {}").isEqualTo("{}");
                    assertThat(rs.getBoolean(2)).as("no headers means NULL").isTrue();
                }
            }
        }
    }

    @Test
    void badInputFailsBeforeTouchingTheTransactionAndBadJsonFailsWithTheDriversError() throws Exception {
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            assertThatThrownBy(() -> writer.record(tx, "t", "", "{}")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> writer.record(tx, "", "s", "{}")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> writer.record(tx, "t", "s", "{}", Map.of("h", "nul\u0000")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'h'").hasMessageContaining("NUL");
            RecordedEvent ok = writer.record(tx, "t", "s", "{}");
            assertThat(ok.seq()).as("the transaction is still usable").isPositive();

            assertThatThrownBy(() -> writer.record(tx, "t", "s", "{not json"))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22P02"));
            tx.rollback();
        }
    }

    @Test
    void aHostileTableNameIsQuotedAsOneIdentifierNeverRunAsSql() throws Exception {
        OutboxWriter hostile = new OutboxWriter(HOSTILE);
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            assertThatThrownBy(() -> hostile.record(tx, "t", "s", "{}"))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).as("undefined_table").isEqualTo("42P01"));
            tx.rollback();
        }
        assertThat(db.queryLong("SELECT count(*) FROM pg_class WHERE relname = 'events'")).isEqualTo(1);

        // the same name, created as a table, is simply where the event goes
        db.execute("CREATE TABLE \"events\"\"; DROP TABLE events; --\" (LIKE events INCLUDING ALL)");
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            RecordedEvent e = hostile.record(tx, "t", "s", "{}");
            tx.commit();
            assertThat(db.queryLong("SELECT count(*) FROM \"events\"\"; DROP TABLE events; --\" WHERE id = '"
                + e.id() + "'")).isEqualTo(1);
        }
    }

    @Test
    void aSchemaQualifiedTableIsQuotedPartByPart() throws Exception {
        db.execute("CREATE SCHEMA IF NOT EXISTS app; CREATE TABLE app.events (LIKE public.events INCLUDING ALL)");
        OutboxWriter app = new OutboxWriter("app.events");
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            RecordedEvent e = app.record(tx, "t", "s", "{}");
            tx.commit();
            assertThat(db.queryLong("SELECT count(*) FROM app.events WHERE id = '" + e.id() + "'")).isEqualTo(1);
            assertThat(rowCount(e.id())).isZero();
        }
        assertThatThrownBy(() -> new OutboxWriter(".events")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OutboxWriter(" ")).isInstanceOf(IllegalArgumentException.class);
    }

    private static long rowCount(UUID id) throws SQLException {
        return db.queryLong("SELECT count(*) FROM events WHERE id = '" + id + "'");
    }
}
