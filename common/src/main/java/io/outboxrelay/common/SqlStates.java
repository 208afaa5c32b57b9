package io.outboxrelay.common;

import java.sql.SQLException;
import org.postgresql.util.PSQLState;

/**
 * Every SQLState the relay and the mention task act on, named once: pgjdbc's {@link PSQLState} where it
 * has the code, PostgreSQL's own (Appendix A, "PostgreSQL Error Codes") where it has not. A class is the
 * state's first two characters ({@link #inClass}).
 */
public final class SqlStates {
    /** Class 08, connection exception: the session broke or never came up; a new one may work. */
    public static final String CONNECTION_EXCEPTION_CLASS = "08";
    /** The driver could not reach the server (also what we report for a URL that is not PostgreSQL's). */
    public static final String UNABLE_TO_CONNECT = PSQLState.CONNECTION_UNABLE_TO_CONNECT.getState();
    /** Class 28, invalid authorization: no such role, no pg_hba.conf entry; connection.user is at fault. */
    public static final String AUTHORIZATION_CLASS = "28";
    /** Wrong password: connection.password is at fault. */
    public static final String INVALID_PASSWORD = PSQLState.INVALID_PASSWORD.getState();
    /** The database named in connection.url does not exist. */
    public static final String INVALID_CATALOG_NAME = "3D000";
    /** Class 42, syntax error or access rule violation: a missing object or privilege, not fixed by a retry. */
    public static final String SYNTAX_OR_ACCESS_CLASS = "42";
    /** The role lacks a privilege (a GRANT is missing). */
    public static final String INSUFFICIENT_PRIVILEGE = "42501";
    /** The table does not exist (or is not visible with the role's search_path and privileges). */
    public static final String UNDEFINED_TABLE = PSQLState.UNDEFINED_TABLE.getState();
    /** A column the statement names is missing. */
    public static final String UNDEFINED_COLUMN = PSQLState.UNDEFINED_COLUMN.getState();
    /** A function the statement calls is missing (or takes other argument types). */
    public static final String UNDEFINED_FUNCTION = PSQLState.UNDEFINED_FUNCTION.getState();
    /** Another transaction's write conflicted with ours; the transaction may simply run again. */
    public static final String SERIALIZATION_FAILURE = PSQLState.SERIALIZATION_FAILURE.getState();
    /** The server broke a deadlock by failing our transaction; running it again works. */
    public static final String DEADLOCK_DETECTED = PSQLState.DEADLOCK_DETECTED.getState();
    /** statement_timeout (or a cancel) ended the statement. */
    public static final String QUERY_CANCELED = PSQLState.QUERY_CANCELED.getState();
    /** lock_timeout ended the wait for a lock. */
    public static final String LOCK_NOT_AVAILABLE = "55P03";
    /** idle_in_transaction_session_timeout ended the session. */
    public static final String IDLE_IN_TRANSACTION_TIMEOUT = "25P03";
    /** The server is shutting down (smart or fast shutdown, or pg_terminate_backend). */
    public static final String ADMIN_SHUTDOWN = "57P01";
    /** The server is restarting after a crash of another backend. */
    public static final String CRASH_SHUTDOWN = "57P02";
    /** The server is starting up or in recovery and does not take connections yet. */
    public static final String CANNOT_CONNECT_NOW = "57P03";
    /** Class 53, insufficient resources: disk full, out of memory, too many connections; passes with time. */
    public static final String INSUFFICIENT_RESOURCES_CLASS = "53";
    /** max_connections reached. */
    public static final String TOO_MANY_CONNECTIONS = "53300";
    /** program_limit_exceeded: what a commit whose NOTIFYs do not fit the server's NOTIFY queue fails with. */
    public static final String PROGRAM_LIMIT_EXCEEDED = "54000";

    private SqlStates() {
    }

    /** Whether {@code e} carries exactly {@code state}. */
    public static boolean is(SQLException e, String state) {
        return state.equals(e.getSQLState());
    }

    /** Whether {@code state} (possibly null) is of the two-character class {@code stateClass}. */
    public static boolean inClass(String state, String stateClass) {
        return state != null && state.startsWith(stateClass);
    }
}
