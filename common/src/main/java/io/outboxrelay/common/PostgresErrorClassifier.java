package io.outboxrelay.common;

import java.sql.SQLException;
import java.sql.SQLTransientException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.postgresql.util.PSQLState;

/**
 * The one place that decides whether a database error is worth retrying. Retriable errors (the
 * connection went away, the server is shutting down or restarting, a deadlock, a lock or statement
 * timeout) become {@link RetriableException}: the task backs off and recovers by itself. Everything
 * else that a retry cannot fix (missing table or column, bad credentials, missing privileges) becomes
 * a {@link ConnectException} whose message says what to do.
 */
public final class PostgresErrorClassifier {
    private static final String DEADLOCK = "40P01";
    private static final String SERIALIZATION_FAILURE = PSQLState.SERIALIZATION_FAILURE.getState();
    private static final String ADMIN_SHUTDOWN = "57P01";
    private static final String CRASH_SHUTDOWN = "57P02";
    private static final String CANNOT_CONNECT_NOW = "57P03";
    private static final String QUERY_CANCELED = "57014"; // statement_timeout
    private static final String LOCK_NOT_AVAILABLE = "55P03"; // lock_timeout
    private static final String IDLE_IN_TX_TIMEOUT = "25P03";
    private static final String TOO_MANY_CONNECTIONS = "53300";
    private static final String UNDEFINED_TABLE = PSQLState.UNDEFINED_TABLE.getState();
    private static final String UNDEFINED_COLUMN = PSQLState.UNDEFINED_COLUMN.getState();
    private static final String UNDEFINED_FUNCTION = PSQLState.UNDEFINED_FUNCTION.getState();
    private static final String INSUFFICIENT_PRIVILEGE = "42501";
    private static final String INVALID_PASSWORD = PSQLState.INVALID_PASSWORD.getState();

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
        return state.startsWith("08") // connection exception (PSQLState.CONNECTION_FAILURE & co.)
            || state.equals(DEADLOCK) || state.equals(SERIALIZATION_FAILURE)
            || state.equals(ADMIN_SHUTDOWN) || state.equals(CRASH_SHUTDOWN) || state.equals(CANNOT_CONNECT_NOW)
            || state.equals(QUERY_CANCELED) || state.equals(LOCK_NOT_AVAILABLE)
            || state.equals(IDLE_IN_TX_TIMEOUT) || state.equals(TOO_MANY_CONNECTIONS)
            || state.startsWith("53"); // insufficient resources: disk full, out of memory
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
        if (state.equals(UNDEFINED_TABLE)) {
            return ". The table does not exist: create it with schemas/sql/outbox.sql (or mentions.sql),"
                + " or point outbox.table at the right schema-qualified name";
        }
        if (state.equals(UNDEFINED_COLUMN)) {
            return ". A column the connector needs is missing: compare the table with schemas/sql/outbox.sql"
                + " and apply the missing columns";
        }
        if (state.equals(UNDEFINED_FUNCTION)) {
            return ". A function the connector needs is missing: apply schemas/sql/outbox.sql";
        }
        if (state.equals(INSUFFICIENT_PRIVILEGE)) {
            return ". The role lacks a privilege: apply the GRANTs at the end of schemas/sql/outbox.sql"
                + " to connection.user";
        }
        if (state.equals(INVALID_PASSWORD) || state.startsWith("28")) {
            return ". Authentication failed: check connection.user and connection.password";
        }
        if (state.equals("3D000")) {
            return ". The database in connection.url does not exist";
        }
        return "";
    }
}
