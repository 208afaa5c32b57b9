package io.outboxrelay.writer;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.postgresql.core.Utils;

/**
 * The writer helper's SQL: named statements read from {@code outbox-writer.sql} (each introduced by a
 * {@code -- name: X} line), and the one thing ever spliced into them, the outbox table name, quoted
 * by the driver's own identifier escaping. A configured name is split on its first dot into schema and
 * table, exactly as the relay reads {@code outbox.table}, so both sides name the same table and a
 * hostile name becomes a (missing) table, never SQL.
 */
final class WriterSql {
    private static final Map<String, String> STATEMENTS = load("outbox-writer.sql");

    private WriterSql() {
    }

    /** The named statement with {@code {table}} replaced by the quoted form of {@code table}. */
    static String forTable(String name, String table) {
        String sql = STATEMENTS.get(name);
        if (sql == null) {
            throw new IllegalArgumentException("no SQL statement named " + name);
        }
        return sql.replace("{table}", quoteTable(table));
    }

    /** {@code events} becomes {@code "events"}, {@code app.events} becomes {@code "app"."events"}. */
    static String quoteTable(String table) {
        if (table == null || table.isBlank()) {
            throw new IllegalArgumentException("outbox table name must not be empty");
        }
        int dot = table.indexOf('.');
        StringBuilder out = new StringBuilder(table.length() + 6);
        try {
            if (dot >= 0) {
                Utils.escapeIdentifier(out, part(table, table.substring(0, dot))).append('.');
            }
            Utils.escapeIdentifier(out, part(table, table.substring(dot + 1)));
        } catch (SQLException e) {
            throw new IllegalArgumentException("invalid outbox table name: " + e.getMessage(), e);
        }
        return out.toString();
    }

    private static String part(String table, String part) {
        if (part.isEmpty()) {
            throw new IllegalArgumentException("outbox table name '" + table + "' has an empty schema or table part");
        }
        return part;
    }

    private static Map<String, String> load(String resource) {
        try (InputStream in = WriterSql.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("SQL resource " + resource + " is missing from the outbox-writer jar");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, String> parse(String text) {
        Map<String, String> out = new HashMap<>();
        String name = null;
        StringBuilder body = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String trimmed = line.trim();
            if (trimmed.startsWith("-- name:")) {
                put(out, name, body);
                name = trimmed.substring("-- name:".length()).trim();
                body.setLength(0);
            } else if (name != null && !trimmed.startsWith("--")) {
                body.append(line).append('\n');
            }
        }
        put(out, name, body);
        return Map.copyOf(out);
    }

    private static void put(Map<String, String> out, String name, StringBuilder body) {
        if (name != null) {
            out.put(name, body.toString().trim());
        }
    }
}
