package io.outboxrelay.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Named SQL statements kept in a resource file, each introduced by a {@code -- name: X} line.
 * Statements that name the outbox table carry the placeholder {@code {table}}, replaced by a quoted
 * identifier from {@link Identifiers#quoteQualified}; nothing else is ever spliced into SQL.
 */
public final class NamedSql {
    private final Map<String, String> statements;

    private NamedSql(Map<String, String> statements) {
        this.statements = statements;
    }

    public static NamedSql load(Class<?> owner, String resource) {
        try (InputStream in = owner.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("SQL resource " + resource + " not found next to " + owner);
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static NamedSql parse(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        String name = null;
        StringBuilder body = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String trimmed = line.trim();
            if (trimmed.startsWith("-- name:")) {
                if (name != null) {
                    out.put(name, body.toString().trim());
                }
                name = trimmed.substring("-- name:".length()).trim();
                body.setLength(0);
            } else if (name != null && !trimmed.startsWith("--")) {
                body.append(line).append('\n');
            }
        }
        if (name != null) {
            out.put(name, body.toString().trim());
        }
        return new NamedSql(Map.copyOf(out));
    }

    public String get(String name) {
        String sql = statements.get(name);
        if (sql == null) {
            throw new IllegalArgumentException("no SQL statement named " + name);
        }
        return sql;
    }

    /** The statement with {@code {table}} replaced by an already-quoted identifier. */
    public String forTable(String name, String quotedTable) {
        return get(name).replace("{table}", quotedTable);
    }
}
