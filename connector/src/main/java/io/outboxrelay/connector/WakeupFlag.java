package io.outboxrelay.connector;

import io.outboxrelay.common.NamedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.apache.kafka.connect.errors.ConnectException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The table's wake-up flag in PostgreSQL (statements in {@code wakeup.sql}; docs/wakeup.md): the sequence
 * {@code <table>_wakeup} that a task sets when it waits, and that the table's trigger takes down, counting
 * each clear in {@code <table>_wakeup_clears} (migration V4), before it NOTIFYs.
 */
final class WakeupFlag implements ClaimPacer.Flag {
    private static final Logger log = LoggerFactory.getLogger(WakeupFlag.class);
    private static final NamedSql SQL = NamedSql.load(WakeupFlag.class, "wakeup.sql");

    private final DataSource dataSource;
    private final String flag;
    private final String clears;
    /** False on a table without migration V4: a look then reads the flag itself. */
    private final boolean counted;

    private WakeupFlag(DataSource dataSource, String flag, String clears, boolean counted) {
        this.dataSource = dataSource;
        this.flag = flag;
        this.clears = clears;
        this.counted = counted;
    }

    /** The table has a flag the role may not use; the message names the GRANT ({@link WakeupObjects}). */
    static final class NotPermitted extends ConnectException {
        NotPermitted(String message) {
            super(message);
        }
    }

    /**
     * The table's flag; null when it has none (an outbox.sql before V2: its trigger NOTIFYs on every insert).
     *
     * @throws NotPermitted when the role may not use it, naming the GRANT: the task then polls while quiet
     *                      ({@link ClaimPacer#pollWithoutFlag})
     */
    static WakeupFlag of(DataSource dataSource, String table) throws SQLException {
        WakeupObjects objects;
        try (Connection c = dataSource.getConnection()) {
            objects = WakeupObjects.of(c, table);
        }
        String missing = objects.missingPrivilege();
        if (missing != null) {
            throw new NotPermitted(missing);
        }
        if (objects.hasCount() && !objects.mayAddToCount()) {
            log.info("Role {} may read but not update {} (the outbox predates migration V9): a wake-up flag that a"
                + " writer took down without counting it (a cancelled insert) and another task armed again leaves rows"
                + " of this task's share to the sweep; GRANT SELECT, UPDATE ON SEQUENCE {} TO outbox_relay"
                + " (schemas/sql/outbox.sql does) closes that, no restart needed", objects.role(), objects.clears(),
                objects.clears());
        }
        return objects.hasFlag() ? new WakeupFlag(dataSource, objects.flag(), objects.clears(), objects.hasCount())
            : null;
    }

    /**
     * A task arms the flag: the count of its clears as the flag goes up (a flag found down counted as a clear first
     * where the role may, migration V9), 0 on a table without the count.
     */
    @Override
    public long arm() throws SQLException {
        return query(counted ? "ArmFlag" : "ArmFlagWithoutCount", rs -> rs.getLong(1));
    }

    /** Whether a writer took the flag down since the arming that returned {@code token}. */
    @Override
    public boolean clearedSince(long token) throws SQLException {
        if (!counted) {
            return query("FlagCleared", rs -> rs.getBoolean(1));
        }
        return query("CountClears", rs -> rs.getLong(1) != token || rs.getBoolean(2));
    }

    @Override
    public boolean counted() {
        return counted;
    }

    private interface Read<T> {
        T from(ResultSet rs) throws SQLException;
    }

    private <T> T query(String statement, Read<T> read) throws SQLException {
        NamedSql.Bindable sql = SQL.bindable(statement, "");
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.sql())) {
            if (sql.names().contains("flag")) {
                sql.set(ps, "flag", flag);
            }
            if (sql.names().contains("clears")) {
                sql.set(ps, "clears", clears);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return read.from(rs);
            }
        }
    }
}
