package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.apache.kafka.connect.errors.ConnectException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wake-up flag that spares writers the NOTIFY lock while the relay is busy. The table's trigger
 * (schemas/sql/outbox.sql) sends a NOTIFY only when the sequence {@code <table>_wakeup} reads 1, and then
 * sets it to 0; a relay task sets it to 1 when it runs out of rows to claim. Sequences are not
 * transactional, so a writer reads the flag as it is at that moment, whatever its isolation level.
 *
 * <p>The race: a writer that read 0 just before a task armed sends no NOTIFY, and commits after the
 * task's last claim. After arming, the task therefore notes the transactions in progress ({@link #arm})
 * and claims again each time some of them end ({@link #someEnded}), until none is left: every writer that
 * read 0 before the arming had its transaction id by then (the trigger fires after its insert), so it
 * either committed before the snapshot (its row is visible to the claim after arming) or was in progress
 * then (the task claims again when it ends).
 */
final class WakeupArming implements WakeupCycle.Flag {
    private static final Logger log = LoggerFactory.getLogger(WakeupArming.class);
    private static final String INSUFFICIENT_PRIVILEGE = "42501";
    private final DataSource dataSource;
    private final String sequence;
    private final String table;
    private final String channel;
    private List<String> inProgress = List.of();
    /** Whether this task's last arming left the flag down because the NOTIFY queue was full. */
    private boolean holdingDown;
    /** Whether the role may run pg_notification_queue_usage() (null: not asked yet). */
    private Boolean queueReadable;
    private long lastWarnNanos;

    /** @param channel the channel the table's trigger notifies ({@code outbox.notify.channel}) */
    WakeupArming(DataSource dataSource, String table, String channel) {
        this.dataSource = dataSource;
        this.sequence = sequenceOf(table);
        this.table = table;
        this.channel = channel;
    }

    /** The quoted name of the flag sequence of {@code table}. */
    static String sequenceOf(String table) {
        return Identifiers.quoteQualified(table + "_wakeup");
    }

    /**
     * Whether the table has the flag (a table made by an older outbox.sql NOTIFYs on every insert
     * instead, and LISTEN alone wakes the relay).
     *
     * @throws ConnectException when the flag is there but the role may not read or set it
     */
    static boolean available(DataSource dataSource, String table) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            String missing = missingPrivilege(c, table);
            if (missing != null && !missing.isEmpty()) {
                throw new ConnectException(missing);
            }
            return missing == null;
        }
    }

    /**
     * What the session's role lacks to use the flag of {@code table}: null when it may use it, empty when
     * the table has no flag, otherwise the problem with the GRANT that fixes it.
     */
    static String missingPrivilege(Connection c, String table) throws SQLException {
        String sequence = sequenceOf(table);
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL,"
            + " CASE WHEN to_regclass(?) IS NOT NULL THEN has_sequence_privilege(to_regclass(?), 'SELECT')"
            + " AND has_sequence_privilege(to_regclass(?), 'UPDATE') END, current_user::text")) {
            for (int i = 1; i <= 4; i++) {
                ps.setString(i, sequence);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    return "";
                }
                return rs.getBoolean(2) ? null : "role " + rs.getString(3) + " needs SELECT and UPDATE on the"
                    + " wake-up flag " + sequence + " (the relay sets it when it waits for a NOTIFY): GRANT SELECT,"
                    + " UPDATE ON SEQUENCE " + sequence + " TO outbox_relay (schemas/sql/outbox.sql does), with "
                    + rs.getString(3) + " a member of outbox_relay";
            }
        }
    }

    /**
     * Sets the flag, then notes the transactions in progress once it is set (a statement of its own, so
     * its snapshot is taken after the flag is visible to every writer). The NOTIFY, when asked for, is sent
     * by an autocommit statement after the flag is set: a task it reaches arms and claims after that.
     *
     * <p>A full NOTIFY queue (over half full) does not fail the arming: a failed pass would give back the
     * rows just claimed, and claim them again only to fail the same way for as long as the queue stays
     * full. The flag stays down instead (every task's arming reads the queue in the same statement that
     * sets the flag, and one whose wake-up NOTIFY found no room takes it down again), since a writer that
     * found it set would notify and fail to commit. While it holds the flag down, this task reports it
     * cleared ({@link #armed}), so that each of its looks ({@link ClaimSchedule#MAX_IDLE_WAIT_MS}) arms and
     * claims, as a polling relay would, whatever another task set meanwhile; it still notes the writers in
     * progress and claims as they end. A wake-up asked for meanwhile is reported unsent, and owed to the
     * next arming.
     */
    @Override
    public boolean arm(boolean wakeEveryTask) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            // leaving a hold-down wakes every task: rows written while the flag was down may be in their share,
            // and a task whose looks missed that spell reads the flag armed again
            boolean wake = wakeEveryTask || holdingDown;
            double usage = raiseFlag(c);
            boolean raised = NotifyQueue.hasRoom(usage) && (!wake || wakeEveryTask(c));
            if (!raised) {
                if (NotifyQueue.hasRoom(usage)) {
                    setFlag(c, 0); // the wake-up found no room after all: a writer that found the flag set would fail
                    usage = NotifyQueue.advanceTail(c);
                }
                holdDown(wake, usage);
            } else if (holdingDown) {
                holdingDown = false;
                log.info("PostgreSQL's NOTIFY queue has room again ({}): the relay sets the wake-up flag {} of {} again",
                    NotifyQueue.describe(usage), sequence, table);
            }
            inProgress = inProgress(c);
            return raised || !wakeEveryTask;
        }
    }

    /**
     * Sets the flag unless the NOTIFY queue is over half full (then down), in one statement whose reading of
     * the queue also moves its tail (see {@link NotifyQueue#advanceTail}).
     *
     * @return how full the queue is; when the role may not read it, 0 (the flag is set as before), or 1 while
     *         this task holds the flag down and a NOTIFY sent to probe the queue found no room
     */
    private double raiseFlag(Connection c) throws SQLException {
        if (queueReadable == null) {
            queueReadable = queueReadable(c);
        }
        if (queueReadable) {
            try (PreparedStatement ps = c.prepareStatement("SELECT u, setval(?::regclass, CASE WHEN u > 0.5 THEN 0"
                + " ELSE 1 END, true) FROM pg_notification_queue_usage() u")) {
                ps.setString(1, sequence);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getDouble(1);
                }
            } catch (SQLException e) {
                // EXECUTE revoked since the task started; a privilege missing on the flag itself fails as before
                if (!INSUFFICIENT_PRIVILEGE.equals(e.getSQLState()) || queueReadable(c)) {
                    throw e;
                }
                queueReadable = false;
            }
        }
        // the queue cannot be read: while holding the flag down, a NOTIFY tells whether it has room again
        if (holdingDown && notifyEveryTask(c) != null) {
            setFlag(c, 0);
            return 1;
        }
        setFlag(c, 1);
        return 0;
    }

    private boolean queueReadable(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT has_function_privilege('pg_catalog.pg_notification_queue_usage()', 'EXECUTE')");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (rs.getBoolean(1)) {
                return true;
            }
        }
        log.warn("The relay's role may not run pg_notification_queue_usage(), so it cannot keep the wake-up flag {} down"
            + " before PostgreSQL's NOTIFY queue is full (the application's inserts that find it set then fail to"
            + " commit): GRANT EXECUTE ON FUNCTION pg_notification_queue_usage() TO outbox_relay", sequence);
        return false;
    }

    private void setFlag(Connection c, int value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT setval(?::regclass, ?, true)")) {
            ps.setString(1, sequence);
            ps.setInt(2, value);
            ps.executeQuery().close();
        }
    }

    private List<String> inProgress(Connection c) throws SQLException {
        List<String> xids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) x");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                xids.add(rs.getString(1));
            }
        }
        return xids;
    }

    /** The flag stays down: warns when this task first holds it down, then at most once a minute. */
    private void holdDown(boolean wakeEveryTask, double usage) {
        long now = System.nanoTime();
        if (!holdingDown || now - lastWarnNanos >= ReceiptsDropped.WARN_EVERY_NANOS) {
            log.warn("PostgreSQL's NOTIFY queue is too full for the wake-up flag ({}): the relay keeps the flag {} of"
                    + " {} down (a writer that found it set would notify and fail to commit){}, and each task claims at"
                    + " its next look instead, every {} ms. {}", NotifyQueue.describe(usage), sequence, table,
                wakeEveryTask ? " and could not wake its other tasks" : "", ClaimSchedule.MAX_IDLE_WAIT_MS,
                NotifyQueue.WHAT_TO_DO);
            lastWarnNanos = now;
        }
        holdingDown = true;
    }

    /**
     * Sends the NOTIFY that wakes every task of the table. A full queue gets its tail moved and, if that made
     * room, the NOTIFY once more; false when it still found none.
     */
    private boolean wakeEveryTask(Connection c) throws SQLException {
        if (notifyEveryTask(c) == null) {
            return true;
        }
        return NotifyQueue.hasRoom(NotifyQueue.advanceTail(c)) && notifyEveryTask(c) == null;
    }

    /** @return null when the NOTIFY went out, the error when the queue had no room for it */
    private SQLException notifyEveryTask(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, '')")) {
            ps.setString(1, channel);
            ps.executeQuery().close();
            return null;
        } catch (SQLException e) {
            if (!NotifyQueue.full(e)) {
                throw e;
            }
            return e;
        }
    }

    /** Whether transactions in progress when the flag was last armed are still running. */
    @Override
    public boolean waiting() {
        return !inProgress.isEmpty();
    }

    /**
     * Drops the transactions noted by {@link #arm} that have ended since the last look.
     *
     * @return whether any had: their rows, if they wrote any, are now committed and no NOTIFY told of them
     */
    @Override
    public boolean someEnded() throws SQLException {
        if (inProgress.isEmpty()) {
            return false;
        }
        try (Connection c = dataSource.getConnection();
             // still running as a new snapshot sees it, which is what the next claim sees: a committed
             // transaction can be marked committed before it leaves the running set (synchronous replication)
             PreparedStatement ps = c.prepareStatement("SELECT x::text FROM unnest(?::text[]::xid8[]) x"
                 + " WHERE NOT pg_visible_in_snapshot(x, pg_current_snapshot())")) {
            Array xids = c.createArrayOf("text", inProgress.toArray());
            ps.setArray(1, xids);
            List<String> still = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    still.add(rs.getString(1));
                }
            }
            boolean ended = still.size() < inProgress.size();
            inProgress = still;
            return ended;
        }
    }

    /**
     * Whether the flag is still set (a writer clears it when it sends the NOTIFY); false while this task holds
     * it down, whatever another task set meanwhile, so that its looks keep claiming.
     */
    @Override
    public boolean armed() throws SQLException {
        if (holdingDown) {
            return false;
        }
        // a queue over half full reads as cleared: the look then arms, which takes the flag down before the
        // application's next insert finds it set
        String sql = Boolean.TRUE.equals(queueReadable)
            ? "SELECT pg_sequence_last_value(?::regclass) = 1 AND pg_notification_queue_usage() <= 0.5"
            : "SELECT pg_sequence_last_value(?::regclass) = 1";
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, sequence);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
