package io.outboxrelay.common;

import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.util.Set;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;

/**
 * The one place that decides whether a database error is worth retrying. Retriable errors (the
 * connection went away, the server is shutting down or restarting, a deadlock, a lock or statement
 * timeout) become {@link RetriableException}: the task backs off and recovers by itself. Everything
 * else that a retry cannot fix (missing table or column, bad credentials, missing privileges) becomes
 * a {@link ConnectException} whose message says what to do.
 */
public final class PostgresErrorClassifier {
    /** The single states a retry fixes, besides the classes of connection and resource errors. */
    private static final Set<String> RETRIABLE = Set.of(SqlStates.DEADLOCK_DETECTED, SqlStates.SERIALIZATION_FAILURE,
        SqlStates.ADMIN_SHUTDOWN, SqlStates.CRASH_SHUTDOWN, SqlStates.CANNOT_CONNECT_NOW, SqlStates.QUERY_CANCELED,
        SqlStates.LOCK_NOT_AVAILABLE, SqlStates.IDLE_IN_TRANSACTION_TIMEOUT, SqlStates.TOO_MANY_CONNECTIONS);

    private PostgresErrorClassifier() {
    }

    public static boolean isRetriable(SQLException e) {
        String state = e.getSQLState();
        if (state == null) {
            // a pool timeout with no driver error behind it, or (pgjdbc) a socket that broke mid-call
            return e instanceof SQLTransientException || e.getCause() instanceof java.io.IOException;
        }
        // The state decides even for an SQLTransientException: HikariCP reports a failed connection
        // attempt as SQLTransientConnectionException carrying the driver's state, and a wrong password
        // (28P01) or a missing database (3D000) behind it is not fixed by retrying.
        return SqlStates.inClass(state, SqlStates.CONNECTION_EXCEPTION_CLASS)
            || RETRIABLE.contains(state)
            || SqlStates.inClass(state, SqlStates.INSUFFICIENT_RESOURCES_CLASS); // disk full, out of memory
    }

    /**
     * @param what what was being done, e.g. "claim from \"events\""; becomes the start of the message
     * @return a RetriableException or a ConnectException carrying an actionable hint; never logs
     */
    public static RuntimeException classify(String what, SQLException e) {
        String base = what + " failed: " + oneLine(e.getMessage() + causeMessage(e)) + " (SQLState "
            + e.getSQLState() + ")";
        if (isRetriable(e)) {
            return new RetriableException(base + "; will retry with backoff", e);
        }
        return new ConnectException(base + hint(e.getSQLState()), e);
    }

    /** The driver's message behind a pool's wrapper ("Connection is not available ..."), if any. */
    private static String causeMessage(SQLException e) {
        Throwable cause = e.getCause();
        if (cause instanceof SQLException && cause.getMessage() != null
            && (e.getMessage() == null || !e.getMessage().contains(cause.getMessage()))) {
            return ": " + cause.getMessage();
        }
        return "";
    }

    /** The driver's message on one line (server messages carry "Position:"/"Detail:" lines). */
    public static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("\\s*\\R\\s*", "; ").trim();
    }

    /** A sentence telling the operator what to change for a fatal error; empty when unknown. */
    public static String hint(String state) {
        if (state == null) {
            return "";
        }
        if (state.equals(SqlStates.UNDEFINED_TABLE)) {
            return ". The table does not exist: create it with schemas/sql/outbox.sql (or mentions.sql),"
                + " or point outbox.table at the right schema-qualified name";
        }
        if (state.equals(SqlStates.UNDEFINED_COLUMN)) {
            return ". A column the connector needs is missing: compare the table with schemas/sql/outbox.sql"
                + " and apply the missing columns";
        }
        if (state.equals(SqlStates.UNDEFINED_FUNCTION)) {
            return ". A function the connector needs is missing: apply schemas/sql/outbox.sql";
        }
        if (state.equals(SqlStates.INSUFFICIENT_PRIVILEGE)) {
            return ". The role lacks a privilege: apply the GRANTs at the end of schemas/sql/outbox.sql"
                + " to connection.user";
        }
        if (state.equals(SqlStates.INVALID_PASSWORD) || SqlStates.inClass(state, SqlStates.AUTHORIZATION_CLASS)) {
            return ". Authentication failed: check connection.user and connection.password";
        }
        if (state.equals(SqlStates.INVALID_CATALOG_NAME)) {
            return ". The database in connection.url does not exist";
        }
        return "";
    }
}
