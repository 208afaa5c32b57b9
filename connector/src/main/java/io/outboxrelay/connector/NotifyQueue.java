package io.outboxrelay.connector;

import io.outboxrelay.common.SqlStates;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** What the relay knows about PostgreSQL's NOTIFY queue, which every database of the server shares. */
final class NotifyQueue {
    private static final String ADVANCE_TAIL = JdbcOutboxStore.SQL.get("AdvanceNotifyQueueTail");

    /** The operator's next step when the queue is full. */
    static final String WHAT_TO_DO = "A session that LISTENs and stays in a transaction (or whose client stops"
        + " reading: wait_event ClientWrite) keeps the queue from draining; PostgreSQL's own warning names its PID."
        + " Look for it with SELECT pid, application_name, state, wait_event, xact_start FROM pg_stat_activity"
        + " WHERE state LIKE 'idle in transaction%' OR wait_event = 'ClientWrite' and end it"
        + " (idle_in_transaction_session_timeout prevents the first kind); SELECT pg_notification_queue_usage()"
        + " shows how full the queue is. Meanwhile every commit that notifies fails, the application's too.";

    private NotifyQueue() {
    }

    static boolean full(SQLException e) {
        return SqlStates.is(e, SqlStates.PROGRAM_LIMIT_EXCEEDED);
    }

    /** What {@link #advanceTail} returns when it could not read the queue. */
    static final double UNKNOWN = -1;

    /**
     * Moves the queue's tail past what every listener has read, and returns how full the queue is then (0 to
     * 1). PostgreSQL moves the tail only when a notifying commit crosses a page boundary or this function
     * runs, and a full queue lets no notifying commit through: after the session that held the queue back
     * has ended, the queue stays full until this runs.
     *
     * @return {@link #UNKNOWN} when the function failed for another reason than a lost connection (EXECUTE
     *         revoked, a statement timeout): the caller then tries its NOTIFY as if there were room
     */
    static double advanceTail(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(ADVANCE_TAIL)) {
            rs.next();
            return rs.getDouble(1);
        } catch (SQLException e) {
            String state = e.getSQLState();
            if (state == null || SqlStates.inClass(state, SqlStates.CONNECTION_EXCEPTION_CLASS)) {
                throw e; // the connection is gone: the pass fails and is retried
            }
            return UNKNOWN;
        }
    }

    /** "42% used", or "usage unknown". */
    static String describe(double usage) {
        return usage < 0 ? "usage unknown" : Math.round(usage * 100) + "% used";
    }

    /** Whether a NOTIFY tried now should find room: the queue is at most half full, or its usage is unknown. */
    static boolean hasRoom(double usage) {
        return usage <= 0.5;
    }
}
