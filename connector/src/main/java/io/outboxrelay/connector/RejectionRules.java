package io.outboxrelay.connector;

import io.outboxrelay.common.Backoff;
import java.util.List;

/**
 * Which rows must not be produced, and what becomes of a row whose records failed: the rules alone, as
 * pure logic. A row is poisoned when it was claimed more than {@code outbox.max.attempts} times, when
 * the claim could not read it whole ({@link ClaimedRow#unreadable}: text that is not UTF-8, a NULL field, a
 * row too large to read), when
 * its {@code occurred_at} is infinite, when its {@code headers} is not a JSON object or sets a header the relay writes itself, or when its record
 * would exceed {@code outbox.max.record.bytes}, or when {@code value.format=payload.json} cannot make a
 * record of its payload or would make a tombstone of it (JSON null); a failed row is poisoned at its last attempt and otherwise
 * released with a backoff that doubles with its attempts.
 */
final class RejectionRules {
    private final OutboxSourceConnectorConfig config;
    private final Backoff backoff;
    /** The shape's reserved headers, listed once: every claimed row is checked against them. */
    private final List<String> reservedHeaders;

    RejectionRules(OutboxSourceConnectorConfig config, Backoff backoff) {
        this.config = config;
        this.backoff = backoff;
        this.reservedHeaders = config.recordShape().reservedHeaders();
    }

    /**
     * At most {@link JdbcOutboxStore#POISONED_TEXT_MAX_CHARS} of a row's earlier error: it may be any size (written by
     * hand, or grown by each poison and requeue), and a reason goes into the row, a log line and a poison record.
     */
    static String cut(String text) {
        int max = JdbcOutboxStore.POISONED_TEXT_MAX_CHARS;
        if (text.length() <= max) {
            return text;
        }
        return text.substring(0, Character.isHighSurrogate(text.charAt(max - 1)) ? max - 1 : max) + "…";
    }

    /** Why this claimed row must not be produced, or null when it may be. */
    String beforeProducing(ClaimedRow row) {
        if (row.attempts() > config.maxAttempts()) {
            return claimedTooOften(row.attempts()) + "; each time the task failed or was stopped while delivering it, or"
                + " the claim's result was lost with the database connection"
                + (row.lastError() == null ? "" : "; last error: " + cut(row.lastError()));
        }
        if (row.unreadable() != null) {
            return row.unreadable();
        }
        if (!row.occurredAtFinite()) {
            return "occurred_at is '" + (row.occurredAtMs() > 0 ? "" : "-") + "infinity', which is no point in time a"
                + " record can carry (its timestamp, the envelope's occurred_at, event.occurred_at); set the row's"
                + " occurred_at to when the event occurred, then SELECT events_requeue(" + row.seq() + ")";
        }
        if (row.headersType() != null && !"object".equals(row.headersType())) {
            return "headers must be a JSON object of header names to values, but is a JSON " + row.headersType()
                + "; fix the row's headers column, then SELECT events_requeue(" + row.seq() + ")";
        }
        String reserved = reservedHeader(row, reservedHeaders);
        if (reserved != null) {
            return "headers sets '" + reserved + "', a header the relay itself writes "
                + reservedHeaders + "; the writer's value would let consumers be misled about"
                + " the event, so the row is not sent. Rename that key in the row's headers column, then SELECT"
                + " events_requeue(" + row.seq() + ")";
        }
        if (config.recordShape().valueFormat() == RecordShape.ValueFormat.PAYLOAD_JSON) {
            String problem = PayloadJson.problem(row.payload());
            if (PayloadJson.NULL.equals(problem)) {
                return "the payload is JSON null, which value.format=payload.json would send as a null record value:"
                    + " a tombstone, which deletes the key (the subject) on a compacted topic; the row is not sent."
                    + " Write the event's payload (at least {}) into the row, then SELECT events_requeue(" + row.seq()
                    + ")";
            }
            if (problem != null) {
                return "value.format=payload.json cannot turn the payload into a record (" + problem + ");"
                    + " simplify the payload or use value.format=payload, then SELECT events_requeue(" + row.seq()
                    + ")";
            }
        }
        int bytes = row.estimatedRecordBytes(config.recordShape());
        if (bytes > config.maxRecordBytes()) {
            return "record of about " + bytes + " bytes once converted (payload " + row.payloadBytes()
                + " bytes) exceeds outbox.max.record.bytes=" + config.maxRecordBytes()
                + "; shrink the payload, or raise outbox.max.record.bytes together with the producer's"
                + " max.request.size and the topic's max.message.bytes, then SELECT events_requeue("
                + row.seq() + ")";
        }
        return null;
    }

    private static String reservedHeader(ClaimedRow row, List<String> reserved) {
        if (row.headerKeys() != null) {
            for (String key : row.headerKeys()) {
                if (reserved.contains(key)) {
                    return key;
                }
            }
        }
        return null;
    }

    /**
     * Why a row given back after a lost claim result must be poisoned, or null: it passed the attempt
     * limit, and is never read, so {@link #beforeProducing} never sees it.
     */
    String unreadPastLimit(long seq, int attempts) {
        if (attempts <= config.maxAttempts()) {
            return null;
        }
        return claimedTooOften(attempts) + "; the result of its last claim was lost with the database connection;"
            + " SELECT events_requeue(" + seq + ") once the connection is sound";
    }

    private String claimedTooOften(int attempts) {
        return "claimed " + attempts + " times without being fanned out (outbox.max.attempts=" + config.maxAttempts()
            + ")";
    }

    /** Why a row whose records failed is poisoned now (its last attempt), or null when it is retried. */
    String poisonAfterFailure(PendingRow row) {
        if (row.row().attempts() < config.maxAttempts()) {
            return null;
        }
        return row.failure() + " (attempt " + row.row().attempts() + " of " + config.maxAttempts() + ")";
    }

    /** How long a failed row waits before it is claimed again: doubling with its attempts. */
    long retryDelayMs(PendingRow row) {
        return backoff.delayForAttempt(row.row().attempts());
    }

    int maxAttempts() {
        return config.maxAttempts();
    }
}
