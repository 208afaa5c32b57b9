package io.outboxrelay.connector;

import io.outboxrelay.common.Json;
import java.sql.Timestamp;
import org.postgresql.PGStatement;

/**
 * One outbox row as the claim returned it. {@code headerKeys}/{@code headerValues} are the entries of
 * the row's {@code headers} object (values that are not JSON strings as their JSON text);
 * {@code headersType} is the JSON type of the column, null when the column is NULL;
 * {@code leaseExpired} says another claimer's lease on the row had expired (it died or stalled);
 * {@code takenOver} that an earlier incarnation of this task held it (the task restarted);
 * {@code rowBytes} the bytes of its id, type, subject, payload and headers as text, as the claim counted
 * them; {@code unreadable} why the row cannot be produced as it was read (its text is not UTF-8, a field is
 * NULL, or the claim did not read it), null for a row read whole.
 */
record ClaimedRow(
    long seq,
    String id,
    String type,
    String subject,
    String payload,
    long occurredAtMs,
    int attempts,
    String lastError,
    int payloadBytes,
    String headersType,
    String[] headerKeys,
    String[] headerValues,
    boolean leaseExpired,
    boolean takenOver,
    long rowBytes,
    String unreadable) {

    /** A row read whole; its bytes counted from its payload. */
    ClaimedRow(long seq, String id, String type, String subject, String payload, long occurredAtMs, int attempts,
               String lastError, int payloadBytes, String headersType, String[] headerKeys, String[] headerValues,
               boolean leaseExpired, boolean takenOver) {
        this(seq, id, type, subject, payload, occurredAtMs, attempts, lastError, payloadBytes, headersType, headerKeys,
            headerValues, leaseExpired, takenOver, payloadBytes, null);
    }

    /** A row no earlier incarnation of the task held. */
    ClaimedRow(long seq, String id, String type, String subject, String payload, long occurredAtMs, int attempts,
               String lastError, int payloadBytes, String headersType, String[] headerKeys, String[] headerValues,
               boolean leaseExpired) {
        this(seq, id, type, subject, payload, occurredAtMs, attempts, lastError, payloadBytes, headersType, headerKeys,
            headerValues, leaseExpired, false);
    }

    /** {@code occurredAtMs} of a row whose occurred_at is 'infinity' or '-infinity': no point in time. */
    static final long OCCURRED_AT_INFINITY = Long.MAX_VALUE;
    static final long OCCURRED_AT_MINUS_INFINITY = Long.MIN_VALUE;

    /** The driver's reading of occurred_at, its infinities as {@link #OCCURRED_AT_INFINITY} and minus that. */
    static long occurredAtMs(Timestamp occurredAt) {
        long ms = occurredAt.getTime();
        if (ms == PGStatement.DATE_POSITIVE_INFINITY) {
            return OCCURRED_AT_INFINITY;
        }
        return ms == PGStatement.DATE_NEGATIVE_INFINITY ? OCCURRED_AT_MINUS_INFINITY : ms;
    }

    boolean occurredAtFinite() {
        return occurredAtMs != OCCURRED_AT_INFINITY && occurredAtMs != OCCURRED_AT_MINUS_INFINITY;
    }

    /**
     * What the schema and field names of one record take when a converter writes them; JsonConverter
     * with schemas enabled writes the value's whole schema into every record (about 700 bytes).
     */
    static final int RECORD_OVERHEAD_BYTES = 1_024;

    /** CloudEvents header names and the fixed-size values (specversion, time, content-type) of one record. */
    static final int CLOUDEVENTS_FIXED_BYTES = 160;

    /**
     * An upper estimate of the bytes the record's key, value and headers take once converted, whatever the
     * converters: the payload as JsonConverter writes it (an escaped JSON string, so a quote or backslash
     * takes two bytes; base64 for {@code payload.bytes}), the value's schema, and the subject, type and id
     * that appear both in the value and as key or headers (and once more as {@code ce_} headers). A
     * {@code payload.json} value is never longer than the escaped text: JsonConverter writes the parsed
     * payload without the spaces PostgreSQL prints and with numbers no longer than their jsonb text.
     */
    int estimatedRecordBytes(RecordShape shape) {
        long payloadAsWritten = Json.stringBytes(payload, payloadBytes);
        if (shape.valueFormat() == RecordShape.ValueFormat.PAYLOAD_BYTES) {
            payloadAsWritten = Math.max(payloadAsWritten, 4L * ((payloadBytes + 2) / 3) + 2);
        }
        // the id is any text on an adopted table: escaped and UTF-8 too
        long texts = Json.stringBytes(subject) + Json.stringBytes(type) + Json.stringBytes(id);
        int copies = shape.cloudEvents() ? 3 : 2;
        long bytes = payloadAsWritten + copies * texts + RECORD_OVERHEAD_BYTES;
        if (shape.cloudEvents()) {
            bytes += Json.utf8Length(shape.cloudEventsSource()) + CLOUDEVENTS_FIXED_BYTES;
        }
        if (headerKeys != null) {
            for (int i = 0; i < headerKeys.length; i++) {
                bytes += Json.utf8Length(headerKeys[i])
                    + (headerValues[i] == null ? 0 : Json.utf8Length(headerValues[i])) + 8;
            }
        }
        return (int) Math.min(bytes, Integer.MAX_VALUE);
    }

}
