package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import io.outboxrelay.common.PostgresErrorClassifier;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
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
    private final DataSource dataSource;
    private final String sequence;
    private final String table;
    private final String channel;
    private List<String> inProgress = List.of();
    private final LongSupplier nanos;
    /** Whether a wake-up found the NOTIFY queue full, and no arming found room since. */
    private boolean queueFull;
    private long lastWarnNanos;

    /** @param channel the channel the table's trigger notifies ({@code outbox.notify.channel}) */
    WakeupArming(DataSource dataSource, String table, String channel) {
        this.dataSource = dataSource;
        this.sequence = sequenceOf(table);
        this.table = table;
        this.channel = channel;
        this.nanos = System::nanoTime;
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
     * <p>A full NOTIFY queue does not fail the arming (a failed pass would give back the rows just claimed,
     * and claim them again only to fail the same way for as long as the queue stays full). While the queue
     * is full the flag stays down instead: a writer that found it set would notify, and its commit would
     * fail. The task then finds the flag down at each look ({@link ClaimSchedule#MAX_IDLE_WAIT_MS}) and
     * claims, as a polling relay would, until an arming finds room again. A wake-up asked for meanwhile is
     * reported unsent, and owed to the next arming.
     */
    @Override
    public boolean arm(boolean wakeEveryTask) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            if (queueFull && !roomAgain(c)) {
                inProgress = List.of(); // the flag stays down: no writer skips a NOTIFY because of it
                return !wakeEveryTask;
            }
            setFlag(c, 1);
            boolean woke = !wakeEveryTask || wakeEveryTask(c);
            if (!woke) {
                setFlag(c, 0); // the queue is full: a writer that found the flag set would fail to commit
                inProgress = List.of();
                return false;
            }
            List<String> xids = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(
                "SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) x");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    xids.add(rs.getString(1));
                }
            }
            inProgress = xids;
            return true;
        }
    }

    private void setFlag(Connection c, int value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT setval(?::regclass, ?, true)")) {
            ps.setString(1, sequence);
            ps.setInt(2, value);
            ps.executeQuery().close();
        }
    }

    /** While the queue was full: moves its tail and says whether that made room (then the flag goes up again). */
    private boolean roomAgain(Connection c) throws SQLException {
        double usage = NotifyQueue.advanceTail(c);
        if (!NotifyQueue.hasRoom(usage)) {
            warnFull("the relay leaves the wake-up flag " + sequence + " of " + table + " down, and each of its tasks"
                + " claims at its next look", usage, null);
            return false;
        }
        queueFull = false;
        log.info("PostgreSQL's NOTIFY queue has room again ({}% used): the relay arms its wake-up flag {} again",
            Math.round(usage * 100), sequence);
        return true;
    }

    /**
     * Sends the NOTIFY that wakes every task of the table. A full queue gets its tail moved and, if that made
     * room, the NOTIFY once more; false when it still found none.
     */
    private boolean wakeEveryTask(Connection c) throws SQLException {
        SQLException full = notifyEveryTask(c);
        double usage = 1;
        if (full != null) {
            usage = NotifyQueue.advanceTail(c);
            if (NotifyQueue.hasRoom(usage)) {
                full = notifyEveryTask(c);
            }
        }
        if (full == null) {
            return true;
        }
        warnFull("the relay could not wake the other tasks of " + table + " after a writer cleared the wake-up flag "
            + sequence + " without its NOTIFY reaching them, and takes the flag down until the queue has room (a"
            + " writer that finds it set would fail to commit); rows in each task's share wait for its next look",
            usage, full);
        queueFull = true;
        return false;
    }

    /** Warns when the queue is first found full, then at most once a minute while it stays full. */
    private void warnFull(String what, double usage, SQLException e) {
        long now = nanos.getAsLong();
        if (queueFull && now - lastWarnNanos < ReceiptsDropped.WARN_EVERY_NANOS) {
            return;
        }
        log.warn("PostgreSQL's NOTIFY queue is full ({}{}% used): {}. {}",
            e == null ? "" : PostgresErrorClassifier.oneLine(e.getMessage()) + ", SQLState " + e.getSQLState() + "; ",
            Math.round(usage * 100), what, NotifyQueue.WHAT_TO_DO);
        lastWarnNanos = now;
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

    /** Whether the flag is still set (a writer clears it when it sends the NOTIFY). */
    @Override
    public boolean armed() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT pg_sequence_last_value(?::regclass) = 1")) {
            ps.setString(1, sequence);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
