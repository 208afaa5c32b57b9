package io.outboxrelay.mentions;

import io.outboxrelay.common.NamedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * One mention task per database scans its messages: two connectors with {@code mentions.enabled=true} on the same
 * database would each publish every recovered mention (statements TakeScan, HoldsScan, LetScanGo and ScanHolder in
 * {@code mentions.sql}). The task holds a session-level advisory lock on a session of its own, opened when it first
 * looks and kept while it answers; PostgreSQL releases the lock when the session ends, so a stopped or crashed task
 * leaves it to the next. Behind a pooler in transaction mode (PgBouncer) the lock lands on a pooled server session
 * and cannot hold this way (mention-recovery-task/README.md).
 */
final class ScanLock implements AutoCloseable {
    private static final NamedSql SQL = NamedSql.load(ScanLock.class, "mentions.sql");
    /** The longest a look may take before its session counts as lost. */
    private static final int LOOK_TIMEOUT_S = 5;

    /** Opens a session of the task's own, outside its pool. */
    @FunctionalInterface
    interface Sessions {
        Connection open() throws SQLException;
    }

    private final Sessions sessions;
    private final String sessionName;
    private Connection held;
    private boolean closed;

    /** @param sessionName the application_name of the session, naming the connector and the task */
    ScanLock(Sessions sessions, String sessionName) {
        this.sessions = sessions;
        this.sessionName = sessionName;
    }

    /**
     * Null when this task holds the scan, taking it if no session does; otherwise who holds it. A session that no
     * longer answers has lost the lock with it: it is closed, and the lock taken again on a new one or found held.
     */
    synchronized String otherScanner() throws SQLException {
        if (closed) {
            throw new SQLException("the task is stopping: its scan's session is closed");
        }
        if (held != null) {
            try {
                if (ask(held, "HoldsScan", false)) {
                    return null;
                }
                ask(held, "LetScanGo", false); // the table was created or recreated: take the new key, or leave it
                return takeOn(held);
            } catch (SQLException lost) {
                if (held != null) {
                    close(held); // the session is gone, and its lock with it: look again on a new one
                    held = null;
                }
            }
        }
        return takeOn(sessions.open());
    }

    /** Takes the lock on {@code c}, keeping {@code c} when it did; otherwise closes it and names who holds it. */
    private String takeOn(Connection c) throws SQLException {
        held = null;
        try {
            if (ask(c, "TakeScan", true)) {
                held = c;
                return null;
            }
            try (PreparedStatement ps = c.prepareStatement(SQL.get("ScanHolder"))) {
                ps.setQueryTimeout(LOOK_TIMEOUT_S);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getString(1) : "a session that has just let it go";
                }
            }
        } finally {
            if (held != c) {
                close(c);
            }
        }
    }

    private boolean ask(Connection c, String statement, boolean named) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SQL.get(statement))) {
            ps.setQueryTimeout(LOOK_TIMEOUT_S);
            if (named) {
                ps.setString(1, sessionName);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    private static void close(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // the session is gone either way, and the lock with it
        }
    }

    /** Ends the session, and with it the lock; no look opens another. */
    @Override
    public synchronized void close() {
        closed = true;
        if (held != null) {
            close(held);
            held = null;
        }
    }
}
