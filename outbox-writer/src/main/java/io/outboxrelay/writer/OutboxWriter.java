package io.outboxrelay.writer;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Records outbox events in the caller's own transaction, so an event exists exactly when the business
 * change it describes commits. It inserts one row and never commits, rolls back or changes the
 * connection's settings; the relay fans the row out after the caller commits. Thread-safe and
 * stateless beyond its SQL: keep one per outbox table.
 *
 * <pre>{@code
 * OutboxWriter outbox = new OutboxWriter();            // table "events"
 * tx.setAutoCommit(false);
 * // ... the business change on tx ...
 * RecordedEvent e = outbox.record(tx, "supplier.connected", "supplier:42", "{\"supplierId\":42}",
 *     Map.of("traceparent", traceparent));
 * tx.commit();
 * }</pre>
 *
 * <p>A failed INSERT (malformed payload JSON, missing table, missing privilege) throws the driver's
 * {@link SQLException} and, as any failed statement does in PostgreSQL, aborts the caller's
 * transaction: roll it back.
 */
public final class OutboxWriter {
    /** The relay's default {@code outbox.table}. */
    public static final String DEFAULT_TABLE = "events";

    private final String table;
    private final String insertSql;

    /** A writer for the default table {@code events}. */
    public OutboxWriter() {
        this(DEFAULT_TABLE);
    }

    /**
     * A writer for {@code table}, optionally schema-qualified ({@code app.events}), named exactly as
     * the relay's {@code outbox.table}. The name is quoted, never spliced raw into SQL.
     */
    public OutboxWriter(String table) {
        this.insertSql = WriterSql.forTable("InsertEvent", table);
        this.table = table;
    }

    /** The configured (unquoted) table name. */
    public String table() {
        return table;
    }

    /** {@link #record(Connection, String, String, String, Map)} without headers. */
    public RecordedEvent record(Connection tx, String type, String subject, String payloadJson)
        throws SQLException {
        return record(tx, type, subject, payloadJson, null);
    }

    /**
     * Inserts one event into the outbox inside {@code tx}'s open transaction and returns its id and
     * seq. Does not commit.
     *
     * @param tx          the caller's connection, with auto-commit off (an auto-committed outbox row
     *                    would not share the fate of the business change, so it is refused)
     * @param type        the event type, e.g. {@code supplier.connected}; matched by subscriptions
     * @param subject     what the event is about, e.g. {@code supplier:42}; the Kafka key, so events of
     *                    one subject stay ordered
     * @param payloadJson the payload as JSON text, stored as {@code jsonb}; null means {@code {}}
     * @param headers     copied to every Kafka record of the event (e.g. {@code traceparent}); null or
     *                    empty means none. Names and values must not be null.
     * @throws IllegalStateException    when {@code tx} is in auto-commit mode
     * @throws IllegalArgumentException for an empty type or subject, or a header PostgreSQL cannot store
     * @throws SQLException             when the INSERT fails; the caller's transaction is then aborted
     */
    public RecordedEvent record(Connection tx, String type, String subject, String payloadJson,
                                Map<String, String> headers) throws SQLException {
        Objects.requireNonNull(tx, "tx");
        requireText(type, "type");
        requireText(subject, "subject");
        String headersJson = JsonText.object(headers);
        if (tx.getAutoCommit()) {
            throw new IllegalStateException("the connection is in auto-commit mode, so the outbox row would commit on"
                + " its own; call setAutoCommit(false) and record the event in the transaction of the change it"
                + " describes");
        }
        try (PreparedStatement ps = tx.prepareStatement(insertSql)) {
            ps.setString(1, type);
            ps.setString(2, subject);
            ps.setString(3, payloadJson == null ? "{}" : payloadJson);
            if (headersJson == null) {
                ps.setNull(4, Types.VARCHAR);
            } else {
                ps.setString(4, headersJson);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("INSERT INTO " + table + " returned no row (is a rule or trigger"
                        + " swallowing it?)");
                }
                return new RecordedEvent(rs.getObject(1, UUID.class), rs.getLong(2));
            }
        }
    }

    private static void requireText(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("event " + what + " must not be null or empty");
        }
    }
}
