package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.Config;

/**
 * {@code validate()}'s look at the outbox table's columns: the relay's state columns, and a column of a
 * type the relay reads for each of the event's fields ({@code outbox.column.*}), each problem on its key.
 */
final class OutboxColumnChecks {
    private static final Set<String> TEXT_TYPES = Set.of("jsonb", "json", "text", "character varying", "character");
    /** Types whose text does not depend on session settings (time zone, date style, float digits). */
    private static final Set<String> STABLE_TEXT_TYPES = Set.of("text", "character varying", "character", "uuid",
        "smallint", "integer", "bigint", "numeric", "boolean", "name", "citext");

    private final OutboxSourceConnectorConfig config;

    OutboxColumnChecks(OutboxSourceConnectorConfig config) {
        this.config = config;
    }

    /**
     * A column of the table: its type (a domain's base type, without modifiers), whether that type is an
     * enum, and whether it may be NULL.
     */
    private record Column(String type, boolean enumType, boolean notNull) {
    }

    private static Map<String, Column> columns(Connection c, String quoted) throws SQLException {
        Map<String, Column> columns = new LinkedHashMap<>();
        try (PreparedStatement ps = OutboxLiveValidator.prepare(c, "TableColumns", quoted)) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    columns.put(rs.getString(1), new Column(rs.getString(2), rs.getBoolean(4), rs.getBoolean(3)));
                }
            }
        }
        return columns;
    }

    /**
     * The relay's state columns and the columns of the event's fields ({@code outbox.column.*}). A table
     * that lacks state columns is not an outbox yet: one error on outbox.table lists everything it lacks
     * (the fields' columns included, unless their key was set), with the two schema files that fix it.
     * Otherwise each field's column must be there, of a type the relay reads, on the field's key. Returns
     * whether every column is fine.
     */
    boolean check(Connection c, Config result, String quoted) throws SQLException {
        Map<String, Column> columns = columns(c, quoted);
        List<String> missingState = OutboxColumns.STATE_COLUMNS.stream().filter(col -> !columns.containsKey(col))
            .toList();
        List<String> missing = new ArrayList<>();
        boolean fine = true;
        for (Map.Entry<String, String> field : config.columns().byField().entrySet()) {
            String key = OutboxSourceConnectorConfig.COLUMN_PREFIX + field.getKey();
            String column = field.getValue();
            if (column.isEmpty()) {
                continue; // no headers column
            }
            Column found = columns.get(column);
            if (found == null && !missingState.isEmpty() && !config.originals().containsKey(key)) {
                missing.add(column);
                fine = false;
            } else if (found == null) {
                OutboxLiveValidator.error(result, key, key + "=" + column + ", but table " + quoted + " has no column " + column
                    + " (its columns: " + String.join(", ", eventColumns(columns)) + ")" + missingHint(field.getKey()));
                fine = false;
            } else if (missingState.isEmpty()) {
                String problem = typeProblem(field.getKey(), Identifiers.quote(column), found, quoted);
                if (problem != null) {
                    OutboxLiveValidator.error(result, key, key + "=" + column + ": " + problem);
                    fine = false;
                }
            }
        }
        missing.addAll(missingState);
        if (!missing.isEmpty()) {
            OutboxLiveValidator.error(result, OutboxSourceConnectorConfig.TABLE, "table " + quoted + " lacks columns " + missing
                + "; compare it with schemas/sql/outbox.sql, or keep the table and its writers and add the relay's"
                + " columns with " + schemaCommand(true) + ", mapping the event's fields onto the table's own"
                + " columns with outbox.column.* (docs/adopting-a-table.md)");
        }
        return fine && missing.isEmpty();
    }

    /**
     * The psql command that makes the table's objects with this config's names: outbox.sql, or for a table of
     * one's own the adopt script, given the columns the operators' views read where they are not the defaults.
     */
    String schemaCommand(boolean adopt) {
        StringBuilder command = new StringBuilder("psql -v table=").append(config.table()).append(" -v channel=")
            .append(config.notifyChannel());
        if (!adopt) {
            return command.append(" -f schemas/sql/outbox.sql").toString();
        }
        Map<String, String> defaults = OutboxColumns.DEFAULT.byField();
        config.columns().byField().forEach((field, column) -> {
            if (!column.equals(defaults.get(field)) && !field.equals("payload") && !field.equals("headers")) {
                command.append(" -v column_").append(field).append('=').append(column);
            }
        });
        return command.append(" -f schemas/sql/outbox-adopt-existing.sql").toString();
    }

    private static List<String> eventColumns(Map<String, Column> columns) {
        return columns.keySet().stream().filter(col -> !OutboxColumns.STATE_COLUMNS.contains(col)).toList();
    }

    private static String missingHint(String field) {
        return switch (field) {
            case "headers" -> "; set outbox.column.headers to empty when the table has no headers column (the"
                + " records then carry only the relay's own headers)";
            case "occurred_at" -> "; schemas/sql/outbox-adopt-existing.sql adds occurred_at timestamptz NOT NULL"
                + " DEFAULT now() to a table that has none";
            default -> "";
        };
    }

    /** Why the relay cannot read {@code field} from {@code column}, or null when it can. */
    private static String typeProblem(String field, String column, Column found, String quoted) {
        String type = found.type();
        switch (field) {
            case "payload" -> {
                if (type.equals("bytea")) {
                    return "column " + column + " is bytea, which the relay does not read: records carry the"
                        + " payload as JSON text, and bytea reads as \\x hex. Store the JSON as jsonb, json, text or"
                        + " varchar, e.g. ALTER TABLE " + quoted + " ALTER COLUMN " + column + " TYPE jsonb USING"
                        + " convert_from(" + column + ", 'UTF8')::jsonb";
                }
                if (!TEXT_TYPES.contains(type)) {
                    return "column " + column + " is " + type + "; the payload must be jsonb, json, text or varchar";
                }
                return null; // NULL reads as the JSON null
            }
            case "headers" -> {
                return type.equals("jsonb") || type.equals("json") ? null : "column " + column + " is " + type
                    + "; headers must be jsonb or json (an object of header names to values), or set"
                    + " outbox.column.headers to empty for none";
            }
            case "occurred_at" -> {
                if (!type.equals("timestamp with time zone")) {
                    return "column " + column + " is " + type + "; the record timestamp needs a timestamptz (a point"
                        + " in time), e.g. ALTER TABLE " + quoted + " ALTER COLUMN " + column + " TYPE timestamptz"
                        + (type.startsWith("timestamp") ? " USING " + column + " AT TIME ZONE 'UTC' (if it holds UTC)"
                        : "") + ", or leave outbox.column.occurred_at unset and add occurred_at with"
                        + " schemas/sql/outbox-adopt-existing.sql";
                }
            }
            case "subject" -> {
                if (!STABLE_TEXT_TYPES.contains(type) && !found.enumType()) {
                    return "column " + column + " is " + type + ", whose text depends on the session's settings (time"
                        + " zone, date style): tasks on workers set differently would split subjects differently"
                        + " and skip rows. Map outbox.column.subject to a column of type text, varchar, char, citext,"
                        + " uuid, an integer or numeric type, boolean, name or an enum";
                }
            }
            default -> {
                // id and type are read as their text: any type works
            }
        }
        return found.notNull() ? null : "column " + column + " may be NULL, and a row without its " + field
            + " cannot become a record: ALTER TABLE " + quoted + " ALTER COLUMN " + column + " SET NOT NULL";
    }
}
