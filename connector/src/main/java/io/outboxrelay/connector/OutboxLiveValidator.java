package io.outboxrelay.connector;

import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.DriverPropertyGuard;
import io.outboxrelay.common.Identifiers;
import io.outboxrelay.common.PostgresDataSources;
import io.outboxrelay.common.PostgresErrorClassifier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;

/**
 * The live half of {@code validate()}: connects with the given credentials and checks the outbox
 * table, its columns and the privileges the relay needs, attaching each problem to its key.
 */
final class OutboxLiveValidator {
    static final List<String> REQUIRED_COLUMNS = List.of("seq", "id", "type", "subject", "payload", "headers",
        "occurred_at", "fanned_out_at", "fanout", "attempts", "next_attempt_at", "last_error", "poisoned_at",
        "lease_owner", "lease_until");

    private final OutboxSourceConnectorConfig config;
    private final String connectorName;

    OutboxLiveValidator(OutboxSourceConnectorConfig config, String connectorName) {
        this.config = config;
        this.connectorName = connectorName;
    }

    void check(Config result) {
        var settings = ConnectionConfigKeys.settings(config, "outbox-relay:validate");
        Connection connection;
        try {
            connection = PostgresDataSources.open(settings);
        } catch (SQLException e) {
            String state = e.getSQLState() == null ? "" : e.getSQLState();
            // 28P01: wrong password; other class 28 (no such role, no pg_hba.conf entry): the user
            String key = state.equals("28P01") ? ConnectionConfigKeys.PASSWORD
                : state.startsWith("28") ? ConnectionConfigKeys.USER : ConnectionConfigKeys.URL;
            error(result, key, "cannot connect to " + DriverPropertyGuard.redact(config.getString(
                ConnectionConfigKeys.URL)) + ": " + e.getMessage() + " (SQLState " + state + ")"
                + PostgresErrorClassifier.hint(state));
            return;
        }
        try (Connection c = connection) {
            checkTable(c, result);
        } catch (SQLException e) {
            // connected, but looking at the table failed, e.g. no USAGE on the table's schema (42501)
            String state = e.getSQLState() == null ? "" : e.getSQLState();
            String key = state.equals("42501") ? ConnectionConfigKeys.USER : OutboxSourceConnectorConfig.TABLE;
            error(result, key, "cannot check table " + config.quotedTable() + ": " + e.getMessage()
                + " (SQLState " + state + ")" + PostgresErrorClassifier.hint(state));
        }
    }

    private void checkTable(Connection c, Config result) throws SQLException {
        String table = config.table();
        String quoted = Identifiers.quoteQualified(table);
        String regclass;
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)::text")) {
            ps.setString(1, quoted);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                regclass = rs.getString(1);
            }
        }
        if (regclass == null) {
            error(result, OutboxSourceConnectorConfig.TABLE, "table " + quoted + " does not exist in this database;"
                + " create it with schemas/sql/outbox.sql or set outbox.table to its schema-qualified name");
            return;
        }
        Set<String> columns = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT attname FROM pg_attribute WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped")) {
            ps.setString(1, quoted);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    columns.add(rs.getString(1));
                }
            }
        }
        String shared = new SharedTableGuard(connectorName, config.quotedTable(), config.subscriptions()).conflict(c);
        if (shared != null) {
            error(result, OutboxSourceConnectorConfig.SUBSCRIPTIONS, shared);
        }
        List<String> missing = REQUIRED_COLUMNS.stream().filter(col -> !columns.contains(col)).toList();
        if (!missing.isEmpty()) {
            error(result, OutboxSourceConnectorConfig.TABLE, "table " + quoted + " lacks columns " + missing
                + "; compare it with schemas/sql/outbox.sql");
        }
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT has_table_privilege(?::regclass, 'SELECT'), has_table_privilege(?::regclass, 'UPDATE'),"
                + " current_user::text, has_table_privilege(?::regclass, 'DELETE')")) {
            ps.setString(1, quoted);
            ps.setString(2, quoted);
            ps.setString(3, quoted);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                String role = rs.getString(3);
                if (!rs.getBoolean(1) || !rs.getBoolean(2)) {
                    error(result, ConnectionConfigKeys.USER, "role " + role + " needs SELECT and UPDATE on "
                        + quoted + ": GRANT outbox_relay TO " + role + " (the group schemas/sql/outbox.sql"
                        + " creates), or GRANT SELECT, UPDATE ON " + quoted + " TO " + role);
                } else if (config.listenEnabled()) {
                    // the same group grants the flag; reported only when the table's own grant is in place
                    String flag = WakeupArming.missingPrivilege(c, table);
                    if (flag != null && !flag.isEmpty()) {
                        error(result, ConnectionConfigKeys.USER, flag);
                    }
                }
                long retentionMs = config.retentionMs();
                if (retentionMs > 0 && !rs.getBoolean(4)) {
                    error(result, OutboxSourceConnectorConfig.RETENTION_MS, "outbox.retention.ms=" + retentionMs
                        + " deletes fanned rows, but role " + role + " may not DELETE from " + quoted + ": GRANT DELETE"
                        + " ON " + quoted + " TO outbox_relay (see schemas/sql/outbox.sql), or set outbox.retention.ms=0");
                }
            }
        }
    }

    static void error(Config result, String key, String message) {
        for (ConfigValue v : result.configValues()) {
            if (v.name().equals(key)) {
                v.addErrorMessage(message);
                return;
            }
        }
        ConfigValue v = new ConfigValue(key);
        v.addErrorMessage(message);
        result.configValues().add(v);
    }
}
