package io.outboxrelay.connector;

import io.outboxrelay.common.NamedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
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
    /** False on a table without migration V4: the arming sets the flag alone. */
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
            log.info("Role {} may not update {} (the outbox predates migration V9, or the grant was taken): its"
                + " armings count no clear they find, which only relay tasks of earlier versions read; GRANT SELECT,"
                + " UPDATE ON SEQUENCE {} TO outbox_relay (schemas/sql/outbox.sql does)", objects.role(),
                objects.clears(), objects.clears());
        }
        if (objects.hasFlag() && !objects.hasCount()) {
            log.warn("Outbox table {} has the wake-up flag but not the count of its clears (migration V4,"
                + " schemas/migrations/flyway/V4__outbox_wakeup_clears.sql; re-running schemas/sql/outbox.sql applies"
                + " it): until then its trigger NOTIFYs even into a full NOTIFY queue, which fails the inserts that"
                + " find the flag armed (docs/wakeup.md, \"Older tables\")", table);
        }
        return objects.hasFlag() ? new WakeupFlag(dataSource, objects.flag(), objects.clears(), objects.hasCount())
            : null;
    }

    /**
     * A task arms the flag (a flag found down counted as a clear first where the role may, migration V9: tasks of
     * versions that read the count see it move).
     */
    @Override
    public void arm() throws SQLException {
        NamedSql.Bindable sql = SQL.bindable(counted ? "ArmFlag" : "ArmFlagWithoutCount", "");
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.sql())) {
            sql.set(ps, "flag", flag);
            if (counted) {
                sql.set(ps, "clears", clears);
            }
            ps.executeQuery().close();
        }
    }
}
