package io.outboxrelay.mentions;

import io.outboxrelay.common.PostgresErrorClassifier;
import java.sql.SQLException;

/**
 * Turns a database error of the mention-recovery task into one log line that says what failed, why,
 * and (for errors a retry cannot fix) what the operator should change. Retriable or not is decided
 * by the shared {@link PostgresErrorClassifier}; the task logs and retries either way, it never fails.
 */
final class MentionErrors {
    /** For SQLState class 42: the tables, columns or grants do not match schemas/sql/mentions.sql. */
    static final String SCHEMA_HINT = ". Apply schemas/sql/mentions.sql (and, for a messages table that "
        + "predates the marker, mentions-add-marker-migration.sql first) and grant role outbox_relay to "
        + "connection.user, or set mentions.enabled=false";

    private MentionErrors() {
    }

    static boolean retriable(SQLException e) {
        return PostgresErrorClassifier.isRetriable(e);
    }

    /**
     * "Mention recovery reading unrouted messages failed: relation "messages" does not exist (SQLState
     * 42P01). Apply schemas/sql/mentions.sql ..." — the hint only when a retry cannot fix it.
     */
    static String describe(String what, SQLException e) {
        String state = e.getSQLState();
        String base = "Mention recovery " + what + " failed: " + messageOf(e) + " (SQLState " + state + ")";
        if (retriable(e)) {
            return base;
        }
        return base + (state != null && state.startsWith("42") ? SCHEMA_HINT : PostgresErrorClassifier.hint(state));
    }

    /** The error's message, plus the driver's message behind a pool wrapper ("Connection is not available"). */
    private static String messageOf(SQLException e) {
        String message = String.valueOf(e.getMessage());
        Throwable cause = e.getCause();
        if (cause instanceof SQLException && cause.getMessage() != null && !message.contains(cause.getMessage())) {
            return message + ": " + cause.getMessage();
        }
        return message;
    }
}
