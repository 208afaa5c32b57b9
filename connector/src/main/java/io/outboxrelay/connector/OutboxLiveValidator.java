package io.outboxrelay.connector;

import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.DriverPropertyGuard;
import io.outboxrelay.common.Identifiers;
import io.outboxrelay.common.NamedSql;
import io.outboxrelay.common.PostgresDataSources;
import io.outboxrelay.common.PostgresErrorClassifier;
import io.outboxrelay.common.SqlStates;
import io.outboxrelay.mentions.MentionRecoveryConfig;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live half of {@code validate()}: connects with the given credentials and checks the outbox
 * table, its columns, its NOTIFY trigger and claim index, and the privileges the relay needs, attaching
 * each problem to its key.
 */
final class OutboxLiveValidator {
    private static final Logger log = LoggerFactory.getLogger(OutboxLiveValidator.class);
    private static final NamedSql SQL = NamedSql.load(OutboxLiveValidator.class, "validation.sql");
    /** The claim's predicate, as {@link #conjuncts} reads an index's. */
    private static final Set<String> CLAIM_PREDICATE = Set.of("fanned_out_at is null", "poisoned_at is null");

    private final OutboxSourceConnectorConfig config;
    private final String connectorName;
    private final OutboxColumnChecks columnChecks;

    OutboxLiveValidator(OutboxSourceConnectorConfig config, String connectorName) {
        this.config = config;
        this.connectorName = connectorName;
        this.columnChecks = new OutboxColumnChecks(config);
    }

    void check(Config result) {
        var settings = ConnectionConfigKeys.settings(config, "outbox-relay:validate");
        Connection connection;
        try {
            connection = PostgresDataSources.open(settings);
        } catch (SQLException e) {
            String state = e.getSQLState() == null ? "" : e.getSQLState();
            // 28P01: wrong password; other class 28 (no such role, no pg_hba.conf entry): the user
            String key = state.equals(SqlStates.INVALID_PASSWORD) ? ConnectionConfigKeys.PASSWORD
                : SqlStates.inClass(state, SqlStates.AUTHORIZATION_CLASS) ? ConnectionConfigKeys.USER
                : ConnectionConfigKeys.URL;
            error(result, key, "cannot connect to " + DriverPropertyGuard.redact(config.getString(
                ConnectionConfigKeys.URL)) + ": " + e.getMessage() + " (SQLState " + state + ")"
                + PostgresErrorClassifier.hint(state));
            return;
        }
        try (Connection c = connection) {
            checkTable(c, result);
            if (config.mentionsEnabled()) {
                checkMentionTables(c, result);
            }
        } catch (SQLException e) {
            // connected, but looking at the table failed, e.g. no USAGE on the table's schema (42501)
            String state = e.getSQLState() == null ? "" : e.getSQLState();
            String key = state.equals(SqlStates.INSUFFICIENT_PRIVILEGE) ? ConnectionConfigKeys.USER
                : OutboxSourceConnectorConfig.TABLE;
            error(result, key, "cannot check table " + config.quotedTable() + ": " + e.getMessage()
                + " (SQLState " + state + ")" + PostgresErrorClassifier.hint(state));
        }
    }

    private void checkTable(Connection c, Config result) throws SQLException {
        String table = config.table();
        String quoted = Identifiers.quoteQualified(table);
        String regclass;
        try (PreparedStatement ps = prepare(c, "TableRegclass", quoted)) {
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
        String shared = new SharedTableGuard(connectorName, config.quotedTable(), config.subscriptions(),
            config.recordShape(), config.columns(), config.strictOrdering()).conflict(c);
        if (shared != null) {
            error(result, OutboxSourceConnectorConfig.SUBSCRIPTIONS, shared);
        }
        if (columnChecks.check(c, result, quoted)) {
            checkUniqueSeq(c, result, quoted);
            // a table copied from a short CREATE TABLE has the columns but not what makes the relay prompt
            if (config.listenEnabled()) {
                checkNotifyTrigger(c, result, quoted);
            }
            checkClaimIndexAndFillfactor(c, result, quoted, config.columns().byField().get("subject"));
            if (config.strictOrdering()) {
                StrictOrderIndexCheck.check(c, result, quoted, config.columns().byField().get("subject"),
                    CLAIM_PREDICATE, OutboxLiveValidator::conjuncts);
            }
        }
        try (PreparedStatement ps = prepare(c, "TablePrivileges", quoted)) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                String role = rs.getString(3);
                if (!rs.getBoolean(1) || !rs.getBoolean(2)) {
                    error(result, ConnectionConfigKeys.USER, "role " + role + " needs SELECT and UPDATE on "
                        + quoted + ": GRANT outbox_relay TO " + role + " (the group schemas/sql/outbox.sql"
                        + " creates), or GRANT SELECT, UPDATE ON " + quoted + " TO " + role);
                } else if (config.listenEnabled()) {
                    // the same group grants the flag; a role with the table's grants alone (all the relay needs)
                    // is accepted, and its tasks poll while quiet (docs/wakeup.md)
                    String flag = WakeupObjects.of(c, table).missingPrivilege();
                    if (flag != null) {
                        log.warn("{}. Without it the relay's tasks claim every outbox.poll.interval.ms ({} ms) while"
                            + " they find nothing, instead of waiting for a NOTIFY", flag, config.pollInterval().toMillis());
                    }
                }
                long retentionMs = config.retentionMs();
                if (retentionMs > 0 && !rs.getBoolean(4)) {
                    error(result, OutboxSourceConnectorConfig.RETENTION_MS, "outbox.retention.ms=" + retentionMs
                        + " deletes fanned rows, but role " + role + " may not DELETE from " + quoted + ": GRANT DELETE"
                        + " ON " + quoted + " TO outbox_relay (see schemas/sql/outbox.sql; a table partitioned by day:"
                        + " GRANT EXECUTE ON FUNCTION " + Identifiers.quoteQualified(table + "_drop_partitions")
                        + "(timestamptz) TO outbox_relay), or set outbox.retention.ms=0");
                }
            }
        }
    }

    /**
     * With mention recovery on: the chat tables its task scans and writes, and the role's grants on them. Missing, the
     * task's every pass failed at run time with an ERROR a minute; here the connector is refused with the fix.
     */
    private static void checkMentionTables(Connection c, Config result) {
        try {
            checkMentionGrants(c, result);
        } catch (SQLException e) {
            // reported on mentions.enabled, not on the outbox's keys
            error(result, MentionRecoveryConfig.ENABLED, "cannot check the chat tables of mention recovery: "
                + e.getMessage() + " (SQLState " + e.getSQLState() + ")");
        }
    }

    private static void checkMentionGrants(Connection c, Config result) throws SQLException {
        List<String> missing = new ArrayList<>();
        List<String> hidden = new ArrayList<>();
        Set<String> unusableSchemas = new TreeSet<>();
        List<String> refused = new ArrayList<>();
        boolean noMarker = false;
        String role = null;
        try (PreparedStatement ps = c.prepareStatement(SQL.get("MentionTables")); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String table = rs.getString(1);
                String privilege = rs.getString(2);
                role = rs.getString(5);
                if (!rs.getBoolean(3)) {
                    Array schemas = rs.getArray(6);
                    List<String> list = missing;
                    if (schemas != null) {
                        unusableSchemas.addAll(List.of((String[]) schemas.getArray()));
                        list = hidden;
                    }
                    if (!list.contains(table)) {
                        list.add(table);
                    }
                } else if (rs.getObject(4) == null) {
                    noMarker = true;
                } else if (!rs.getBoolean(4)) {
                    refused.add(privilege + " ON " + table);
                }
            }
        }
        String key = MentionRecoveryConfig.ENABLED;
        if (!hidden.isEmpty()) {
            String schemas = String.join(", ", unusableSchemas);
            error(result, key, "mentions.enabled=true needs the chat tables " + String.join(", ", hidden)
                + ", which role " + role + "'s search path does not find: schema(s) " + schemas + " of the search"
                + " path hold tables of those names, but the role may not use them, and a search path skips such"
                + " schemas: GRANT USAGE ON SCHEMA " + schemas + " TO outbox_relay (with " + role + " a member of"
                + " outbox_relay), or to " + role + " itself, or set mentions.enabled=false");
        }
        if (!missing.isEmpty()) {
            error(result, key, "mentions.enabled=true needs the chat tables " + String.join(", ", missing)
                + ", which role " + role + "'s search path does not find: apply schemas/sql/mentions.sql to this"
                + " database, or set mentions.enabled=false");
        } else if (noMarker) {
            error(result, key, "mentions.enabled=true needs the marker column messages.mentions_routed_at: apply"
                + " schemas/sql/mentions-add-marker-migration.sql, then schemas/sql/mentions.sql");
        }
        if (!refused.isEmpty()) {
            error(result, key, "mention recovery needs " + String.join(", ", refused) + " for role " + role
                + ": GRANT outbox_relay TO " + role + " (schemas/sql/mentions.sql grants the group these), or grant"
                + " them to the role itself");
        }
    }

    /** The claim and the stamp find a row by seq: it must be unique (a primary key, or a unique index alone on it). */
    private void checkUniqueSeq(Connection c, Config result, String quoted) throws SQLException {
        try (PreparedStatement ps = prepare(c, "UniqueSeqIndex", quoted)) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    error(result, OutboxSourceConnectorConfig.TABLE, "table " + quoted + " has no unique index on"
                        + " seq, which the relay's claims and stamps find rows by: CREATE UNIQUE INDEX CONCURRENTLY "
                        + rs.getString(2) + " ON " + quoted + " (seq);");
                }
            }
        }
    }

    /**
     * LISTEN is on, so the relay learns of new rows from an INSERT trigger that NOTIFYs its channel. A
     * trigger counts when it is enabled, fires on INSERT, its function calls pg_notify or NOTIFY, and the
     * channel is among its arguments (as schemas/sql/outbox.sql passes it) or, for a trigger called
     * without arguments, written in its function.
     */
    private void checkNotifyTrigger(Connection c, Config result, String quoted) throws SQLException {
        String channel = config.notifyChannel();
        String apply = columnChecks.schemaCommand(!config.columns().equals(OutboxColumns.DEFAULT));
        List<String> elsewhere = new ArrayList<>();
        try (PreparedStatement ps = prepare(c, "NotifyTriggers", quoted)) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    List<String> args = triggerArguments(rs.getBytes(2));
                    if (args.isEmpty() ? rs.getString(3).contains(channel) : args.contains(channel)) {
                        return;
                    }
                    elsewhere.add(rs.getString(1) + (args.isEmpty() ? " (channel in its function)"
                        : " (channel '" + args.get(0) + "')"));
                }
            }
        }
        String sweep = "the relay, LISTENing on '" + channel + "', sees new rows only at its sweep ("
            + OutboxSourceConnectorConfig.SWEEP_INTERVAL_MS + ")";
        if (elsewhere.isEmpty()) {
            error(result, OutboxSourceConnectorConfig.NOTIFY_CHANNEL, "table " + quoted + " has no enabled INSERT"
                + " trigger that NOTIFYs, so " + sweep + ": add it with " + apply + " (it keeps the table and"
                + " its rows), or set " + OutboxSourceConnectorConfig.LISTEN_ENABLED + "=false to poll instead");
        } else {
            error(result, OutboxSourceConnectorConfig.NOTIFY_CHANNEL, "table " + quoted + " NOTIFYs from trigger "
                + String.join(", ", elsewhere) + ", not on '" + channel + "', so " + sweep + ": set "
                + OutboxSourceConnectorConfig.NOTIFY_CHANNEL + " to the trigger's channel, or re-create the"
                + " trigger on '" + channel + "' with " + apply);
        }
    }

    /** The arguments a trigger passes its function: pg_trigger.tgargs, each one NUL-terminated. */
    private static List<String> triggerArguments(byte[] tgargs) {
        List<String> args = new ArrayList<>();
        int start = 0;
        for (int i = 0; tgargs != null && i < tgargs.length; i++) {
            if (tgargs[i] == 0) {
                args.add(new String(tgargs, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        return args;
    }

    /**
     * The claim reads {@code fanned_out_at IS NULL AND poisoned_at IS NULL} in seq order: without a partial
     * index on seq with that predicate each claim reads the whole table (an error). One without the subject's
     * hash after seq (before migration V10) makes each task's claim read the other tasks' rows from the table, and
     * a fillfactor of 100 makes the lease UPDATEs non-HOT; both only slow claims (warnings).
     */
    private void checkClaimIndexAndFillfactor(Connection c, Config result, String quoted, String subjectColumn)
        throws SQLException {
        boolean indexed = false;
        boolean hashed = false;
        try (PreparedStatement ps = prepare(c, "PartialSeqIndexPredicates", quoted)) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (CLAIM_PREDICATE.equals(conjuncts(rs.getString(1)))) {
                        indexed = true;
                        hashed |= isShareHash(rs.getString(2), subjectColumn);
                    }
                }
            }
        }
        try (PreparedStatement ps = prepare(c, "ClaimIndexNameAndFillfactor", quoted)) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                String create = "CREATE INDEX CONCURRENTLY " + rs.getString(1) + " ON " + quoted + " (seq, (hashtext("
                    + Identifiers.quote(subjectColumn) + "::text)::bigint + 2147483648)) WHERE fanned_out_at IS NULL"
                    + " AND poisoned_at IS NULL;";
                if (!indexed) {
                    error(result, OutboxSourceConnectorConfig.TABLE, "table " + quoted + " has no partial index for"
                        + " the relay's claim, so every claim reads the whole table: " + create);
                } else if (!hashed) {
                    log.warn("The claim's index on table {} has no subject hash after seq: with more than one relay"
                        + " task, each task's claim reads the other tasks' rows from the table. Apply migration V10"
                        + " (schemas/migrations/flyway/V10__outbox_claim_share_index.sql; re-running"
                        + " schemas/sql/outbox.sql, or outbox-adopt-existing.sql for an adopted table, applies it)",
                        quoted);
                }
                String fillfactor = rs.getString(2);
                if (fillfactor == null || fillfactor.equals("100")) {
                    log.warn("Table {} has fillfactor 100: the relay's lease updates cannot stay HOT, which makes"
                        + " claims 1.4-1.6x slower. ALTER TABLE {} SET (fillfactor = 50) helps pages written from"
                        + " then on (schemas/sql/outbox.sql sets it at creation)", quoted, quoted);
                }
            }
        }
    }

    /**
     * The share's expression around the subject's hash (StrictOrderIndexCheck's key), as pg_get_indexdef prints it: in
     * the parentheses of an expression key, or without them.
     */
    private static final Pattern SHARE_HASH =
        Pattern.compile("\\(?\\(\\((.+)\\)::bigint \\+ '2147483648'::bigint\\)\\)?");

    /** Whether an index key, as pg_get_indexdef prints it, is the share's hash of the subject column (SubjectShare). */
    static boolean isShareHash(String key, String subjectColumn) {
        Matcher m = key == null ? null : SHARE_HASH.matcher(key);
        return m != null && m.matches() && StrictOrderIndexCheck.isSubjectHash(m.group(1), subjectColumn);
    }

    /** {@code ((a IS NULL) AND (b IS NULL))} as {@code {"a is null", "b is null"}}. */
    private static Set<String> conjuncts(String predicate) {
        Set<String> out = new HashSet<>();
        for (String part : predicate.replaceAll("[()]", " ").toLowerCase(Locale.ROOT).split("\\s+and\\s+")) {
            out.add(part.strip().replaceAll("\\s+", " "));
        }
        return out;
    }

    /**
     * A statement of validation.sql with its {@code :table} bound to the quoted table name, as text: the
     * server resolves it, so no configured name is ever spliced into SQL.
     */
    static PreparedStatement prepare(Connection c, String statement, String quotedTable) throws SQLException {
        NamedSql.Bindable sql = SQL.bindable(statement, "");
        PreparedStatement ps = c.prepareStatement(sql.sql());
        try {
            sql.set(ps, "table", quotedTable);
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
        return ps;
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
