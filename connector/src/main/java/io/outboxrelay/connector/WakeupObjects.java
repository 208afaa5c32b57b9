package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import io.outboxrelay.common.NamedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Which wake-up objects an outbox table has, the flag {@code <table>_wakeup} and the count of its clears
 * {@code <table>_wakeup_clears} (migration V4), and whether the session's role may use them (and may add to the count,
 * migration V9: without, the task arms as before V9, no error). Read when a task opens
 * the table ({@link WakeupFlag#of}) and when a config is validated; the flag's own statements are {@link WakeupFlag}'s.
 */
record WakeupObjects(String flag, String clears, boolean hasFlag, boolean hasCount, boolean mayArm,
                     boolean mayAddToCount, String role) {
    private static final NamedSql SQL = NamedSql.load(WakeupObjects.class, "wakeup.sql");

    /** The quoted name of the flag of {@code table} (as configured, unquoted). */
    static String flagName(String table) {
        return Identifiers.quoteQualified(table + "_wakeup");
    }

    /** The quoted name of the count of the flag's clears of {@code table}. */
    static String clearsName(String table) {
        return Identifiers.quoteQualified(table + "_wakeup_clears");
    }

    static WakeupObjects of(Connection c, String table) throws SQLException {
        String flag = flagName(table);
        String clears = clearsName(table);
        NamedSql.Bindable sql = SQL.bindable("WakeupObjects", "");
        try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
            sql.set(ps, "flag", flag);
            sql.set(ps, "clears", clears);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new WakeupObjects(flag, clears, rs.getBoolean(1), rs.getBoolean(2), rs.getBoolean(3),
                    rs.getBoolean(4), rs.getString(5));
            }
        }
    }

    /**
     * What the role lacks to use the wake-up, with the GRANT that fixes it; null when nothing (also when the table has
     * no flag).
     */
    String missingPrivilege() {
        if (!hasFlag || mayArm) {
            return null;
        }
        return "role " + role + " may not use the wake-up flag of the outbox (the relay reads and sets " + flag
            + " when it waits): GRANT SELECT, UPDATE ON SEQUENCE " + flag + " TO outbox_relay (schemas/sql/outbox.sql"
            + " does), with " + role + " a member of outbox_relay";
    }
}
