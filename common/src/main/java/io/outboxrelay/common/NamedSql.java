package io.outboxrelay.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * Named SQL statements kept in a resource file, each introduced by a {@code -- name: X} line.
 * Statements that name the outbox table carry the placeholder {@code {table}}, replaced by a quoted
 * identifier from {@link Identifiers#quoteQualified}; a caller may expand placeholders of its own the same
 * way ({@link #bindable(String, String, UnaryOperator)}), again only with quoted identifiers. Nothing else
 * is ever spliced into SQL.
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

    /** The names of every statement, in no particular order. */
    public Set<String> names() {
        return statements.keySet();
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

    /**
     * The statement with {@code {table}} replaced, its named parameters ({@code :owner}) turned into
     * JDBC's positional ones; bind them by name with {@link Bindable#set}.
     */
    public Bindable bindable(String name, String quotedTable) {
        return Bindable.of(forTable(name, quotedTable));
    }

    /**
     * The same, with the caller's own placeholders expanded by {@code expand} after {@code {table}} and
     * before the parameters are read, so that whatever it splices is never taken for a parameter.
     */
    public Bindable bindable(String name, String quotedTable, UnaryOperator<String> expand) {
        return Bindable.of(expand.apply(forTable(name, quotedTable)));
    }

    /**
     * A statement with named parameters: {@code :name} outside string literals and quoted identifiers
     * (a configured name such as {@code "it's:x"}), where a cast ({@code ::bigint}) is not a parameter.
     * One name may stand in several places.
     */
    public record Bindable(String sql, List<String> names) {
        static Bindable of(String text) {
            StringBuilder sql = new StringBuilder(text.length());
            List<String> names = new ArrayList<>();
            char quote = 0; // 0, or the ' or " that opened the literal or identifier we are in
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                boolean quoted = quote != 0;
                if (c == '\'' || c == '"') {
                    if (quote == 0) {
                        quote = c;
                    } else if (quote == c) {
                        quote = 0; // a doubled quote closes and reopens: the same state either way
                    }
                } else if (!quoted && c == ':' && i + 1 < text.length() && text.charAt(i + 1) == ':') {
                    sql.append("::");
                    i++;
                    continue;
                } else if (!quoted && c == ':' && i + 1 < text.length() && isNameStart(text.charAt(i + 1))) {
                    int end = i + 1;
                    while (end < text.length() && isNamePart(text.charAt(end))) {
                        end++;
                    }
                    names.add(text.substring(i + 1, end));
                    sql.append('?');
                    i = end - 1;
                    continue;
                }
                sql.append(c);
            }
            return new Bindable(sql.toString(), List.copyOf(names));
        }

        private static boolean isNameStart(char c) {
            return c >= 'a' && c <= 'z' || c == '_';
        }

        private static boolean isNamePart(char c) {
            return isNameStart(c) || c >= '0' && c <= '9';
        }

        /** Binds {@code value} to every place the parameter {@code name} stands. */
        public void set(PreparedStatement ps, String name, Object value) throws SQLException {
            boolean found = false;
            for (int i = 0; i < names.size(); i++) {
                if (names.get(i).equals(name)) {
                    ps.setObject(i + 1, value);
                    found = true;
                }
            }
            if (!found) {
                throw new IllegalArgumentException("no parameter :" + name + " in " + sql);
            }
        }
    }
}
