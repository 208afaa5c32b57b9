package io.outboxrelay.connector;

import io.outboxrelay.common.DatabaseText;
import io.outboxrelay.common.Json;
import java.nio.charset.CharacterCodingException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;

/**
 * Reads one row of a claim's result ({@code ClaimRows}) so that no row can fail the claim: every text is
 * read as bytes and decoded strictly here ({@link DatabaseText}), and a row whose text has no characters (bytes
 * that are not UTF-8 in a SQL_ASCII database, or no character of a single-byte encoding) or whose field is NULL
 * comes out as a row to poison ({@link ClaimedRow#unreadable}) with a reason that names the field, as does a row
 * the claim did not read (past its attempts, or too large to produce: its text never left the database).
 * Only an error of the connection itself, on {@code next()}, fails the claim.
 */
final class ClaimedRowReader {
    private final int maxRecordBytes;

    /** @param maxRecordBytes {@code outbox.max.record.bytes}, which the claim compared the row's bytes with */
    ClaimedRowReader(int maxRecordBytes) {
        this.maxRecordBytes = maxRecordBytes;
    }

    ClaimedRow read(ResultSet rs) throws SQLException {
        long seq = rs.getLong(1);
        String raw = rs.getString(15);
        byte[] idBytes = rs.getBytes(2);
        int attempts = rs.getInt(7);
        String lastError = DatabaseText.lenient(rs.getBytes(8), raw);
        boolean leaseExpired = rs.getBoolean(10);
        boolean takenOver = rs.getBoolean(11);
        long bytes = rs.getLong(13);
        Fields f = new Fields(seq, raw);
        long occurredAtMs = f.occurredAt(rs, 6);
        if (!rs.getBoolean(14)) {
            return unread(seq, DatabaseText.lenient(idBytes, raw), occurredAtMs, attempts, lastError, leaseExpired,
                takenOver, bytes);
        }
        // read as the other fields are: an id with a byte that is no character must not go out changed (two rows
        // could then share one event.id), nor come back in a receipt the server cannot convert; a row to poison is
        // still described by what can be read of it
        String id = f.text(idBytes, "id");
        if (id == null) {
            id = DatabaseText.lenient(idBytes, raw);
        }
        String type = f.text(rs.getBytes(3), "type");
        String subject = f.text(rs.getBytes(4), "subject");
        String payload = f.text(rs.getBytes(5), "payload");
        String headersText = f.nullableText(rs.getBytes(9), "headers");
        if (f.problem != null) {
            return new ClaimedRow(seq, id, type, subject, payload, occurredAtMs, attempts, lastError, 0, null, null, null,
                leaseExpired, takenOver, bytes, f.problem);
        }
        HeadersJson.Parsed headers = HeadersJson.parse(headersText);
        return new ClaimedRow(seq, id, type, subject, payload, occurredAtMs, attempts, lastError,
            Json.utf8Length(payload), headers.type(), headers.keys(), headers.values(), leaseExpired, takenOver,
            bytes, null);
    }

    /** A row the claim left unread: past its attempts (RejectionRules says so first), or too large to produce. */
    private ClaimedRow unread(long seq, String id, long occurredAtMs, int attempts, String lastError,
                              boolean leaseExpired, boolean takenOver, long bytes) {
        String why = bytes > maxRecordBytes
            ? "its id, type, subject, payload and headers take " + bytes + " bytes as text, more than"
                + " outbox.max.record.bytes=" + maxRecordBytes + " before the record adds anything, so it is neither"
                + " read nor produced; shrink the payload, or raise outbox.max.record.bytes together with the producer's"
                + " max.request.size and the topic's max.message.bytes, then SELECT events_requeue(" + seq + ")"
            : "it was claimed " + attempts + " times without being fanned out, past outbox.max.attempts, so it is not"
                + " read; SELECT events_requeue(" + seq + ") once the cause is fixed";
        return new ClaimedRow(seq, id, null, null, null, occurredAtMs, attempts, lastError, 0, null, null, null,
            leaseExpired, takenOver, bytes, why);
    }

    /** The fields of one row; the first problem found is the row's. */
    private static final class Fields {
        private final long seq;
        /** the database's encoding when the texts came as the hex of its bytes, else null (DatabaseText) */
        private final String raw;
        String problem;

        Fields(long seq, String raw) {
            this.seq = seq;
            this.raw = raw;
        }

        String text(byte[] bytes, String field) {
            String text = nullableText(bytes, field);
            if (text == null) {
                problemOnce(field + " is NULL, which no record can carry; set the row's " + field + " (column"
                    + " outbox.column." + field + "), then SELECT events_requeue(" + seq + ")");
            }
            return text;
        }

        String nullableText(byte[] bytes, String field) {
            if (bytes == null) {
                return null;
            }
            try {
                return DatabaseText.strict(bytes, raw);
            } catch (CharacterCodingException e) {
                problemOnce(DatabaseText.unreadable(field, raw) + " (column outbox.column." + field
                    + "), then SELECT events_requeue(" + seq + ")");
                return null;
            }
        }

        long occurredAt(ResultSet rs, int column) throws SQLException {
            Timestamp ts = rs.getTimestamp(column);
            if (ts == null) {
                problemOnce("occurred_at is NULL, which no record can carry; set the row's occurred_at (column"
                    + " outbox.column.occurred_at), then SELECT events_requeue(" + seq + ")");
                return 0;
            }
            return ClaimedRow.occurredAtMs(ts);
        }

        private void problemOnce(String why) {
            if (problem == null) {
                problem = why;
            }
        }
    }
}
