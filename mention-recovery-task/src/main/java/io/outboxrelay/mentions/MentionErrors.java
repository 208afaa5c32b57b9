package io.outboxrelay.mentions;

import io.outboxrelay.common.PostgresErrorClassifier;
import io.outboxrelay.common.SqlStates;
import java.sql.SQLException;
import java.util.Set;

/**
 * Turns a database error of the mention-recovery task into one line that says what failed, why,
 * and (for errors a retry cannot fix) what the operator should change. Retriable or not is decided
 * by the shared {@link PostgresErrorClassifier}. A failed pass or mark is logged and retried either way.
 */
final class MentionErrors {
    /** For SQLState class 42: the tables, columns or grants do not match schemas/sql/mentions.sql. */
    static final String SCHEMA_HINT = ". Apply schemas/sql/mentions.sql (and, for a messages table that "
        + "predates the marker, mentions-add-marker-migration.sql first) and grant role outbox_relay to "
        + "connection.user, or set mentions.enabled=false";
    /** For SQLState 42501 on the mark: the one column privilege the UPDATE needs. */
    static final String MARK_GRANT_HINT = ". The role may not set the marker: run GRANT UPDATE (mentions_routed_at) "
        + "ON messages TO outbox_relay (as schemas/sql/mentions.sql does), make connection.user a member of "
        + "outbox_relay (the task retries the mark and carries on once it succeeds), or set mentions.enabled=false";

    private MentionErrors() {
    }

    static boolean retriable(SQLException e) {
        return PostgresErrorClassifier.isRetriable(e);
    }

    /** The SQLState classes of an error about the values written: data, a constraint, a trigger's or function's own. */
    private static final Set<String> ABOUT_THE_ROWS = Set.of("22", "23", "P0", "2F", "38", "39", "44");

    /**
     * Whether a write failed on the values of the rows it wrote (a constraint, an exception a trigger raised), so that
     * writing one message at a time finds the message it is about: not a grant, the schema, a read-only server or an
     * outage, which every message would meet.
     */
    static boolean aboutTheRows(SQLException e) {
        String state = e.getSQLState();
        return state != null && state.length() == 5 && ABOUT_THE_ROWS.contains(state.substring(0, 2));
    }

    /**
     * "Mention recovery reading unrouted messages failed: relation "messages" does not exist (SQLState
     * 42P01). Apply schemas/sql/mentions.sql ..." — the hint only when a retry cannot fix it.
     */
    static String describe(String what, SQLException e) {
        String state = e.getSQLState();
        if (retriable(e)) {
            return base(what, e);
        }
        String hint = SqlStates.inClass(state, SqlStates.SYNTAX_OR_ACCESS_CLASS) ? SCHEMA_HINT
            : PostgresErrorClassifier.hint(state);
        return base(what, e) + hint;
    }

    /**
     * A failed mark: the messages were delivered, so no batch is read until it succeeds (every pass would publish
     * their mentions again). Names the grant when the privilege is missing.
     */
    static String markFailure(String what, SQLException e) {
        return SqlStates.is(e, SqlStates.INSUFFICIENT_PRIVILEGE) ? base(what, e) + MARK_GRANT_HINT : describe(what, e);
    }

    private static String base(String what, SQLException e) {
        return "Mention recovery " + what + " failed: " + messageOf(e) + " (SQLState " + e.getSQLState() + ")";
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
