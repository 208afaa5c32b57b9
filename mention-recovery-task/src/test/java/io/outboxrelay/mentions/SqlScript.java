package io.outboxrelay.mentions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs a schema file the way {@code psql} does: one statement at a time (so {@code BEGIN}/{@code COMMIT}
 * and {@code CREATE INDEX CONCURRENTLY} behave as they do for an operator). Splits on semicolons
 * outside quotes, dollar quotes and comments; test-only.
 */
final class SqlScript {
    private SqlScript() {
    }

    static void run(Connection c, Path file) throws SQLException {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            for (String sql : split(text)) {
                st.execute(sql);
            }
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    static List<String> split(String text) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '-' && text.startsWith("--", i)) {
                int end = text.indexOf('\n', i);
                i = end < 0 ? text.length() : end + 1;
                current.append('\n');
            } else if (c == '\'') {
                int end = text.indexOf('\'', i + 1);
                current.append(text, i, end + 1);
                i = end + 1;
            } else if (c == '$' && dollarTag(text, i) != null) {
                String tag = dollarTag(text, i);
                int end = text.indexOf(tag, i + tag.length()) + tag.length();
                current.append(text, i, end);
                i = end;
            } else if (c == ';') {
                add(out, current);
                i++;
            } else {
                current.append(c);
                i++;
            }
        }
        add(out, current);
        return out;
    }

    private static String dollarTag(String text, int at) {
        int end = text.indexOf('$', at + 1);
        if (end < 0) {
            return null;
        }
        String tag = text.substring(at, end + 1);
        return tag.matches("\\$[A-Za-z_]*\\$") ? tag : null;
    }

    private static void add(List<String> out, StringBuilder current) {
        String sql = current.toString().trim();
        if (!sql.isEmpty()) {
            out.add(sql);
        }
        current.setLength(0);
    }
}
