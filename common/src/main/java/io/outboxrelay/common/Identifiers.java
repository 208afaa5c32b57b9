package io.outboxrelay.common;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.core.Utils;

/**
 * Quotes identifiers that come from configuration. A configured name is split on its one optional
 * dot into schema and table, and each part is quoted by the driver's own escaping, so a hostile
 * value becomes a (non-existent) table name, never SQL.
 */
public final class Identifiers {
    private Identifiers() {
    }

    /** {@code events} becomes {@code "events"}, {@code app.events} becomes {@code "app"."events"}. */
    public static String quoteQualified(String configured) {
        return String.join(".", split(configured).stream().map(Identifiers::quote).toList());
    }

    /** One identifier, quoted as a whole even when it contains a dot: {@code occurred.at} becomes {@code "occurred.at"}. */
    public static String quote(String name) {
        StringBuilder out = new StringBuilder();
        try {
            Utils.escapeIdentifier(out, name);
        } catch (SQLException e) {
            throw new IllegalArgumentException("invalid identifier: " + e.getMessage(), e);
        }
        return out.toString();
    }

    /** The unquoted (schema, table) pair; schema is null when not given. */
    public static List<String> split(String configured) {
        if (configured == null || configured.isBlank()) {
            throw new IllegalArgumentException("table name must not be empty");
        }
        int dot = configured.indexOf('.');
        List<String> parts = new ArrayList<>(2);
        if (dot < 0) {
            parts.add(configured);
        } else {
            parts.add(configured.substring(0, dot));
            parts.add(configured.substring(dot + 1));
        }
        for (String p : parts) {
            if (p.isEmpty() || p.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("table name '" + configured + "' has an empty or NUL part");
            }
        }
        return parts;
    }
}
