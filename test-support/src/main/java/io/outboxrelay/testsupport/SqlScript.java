package io.outboxrelay.testsupport;

import io.outboxrelay.common.PsqlScript;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The tests' one way to apply a schema file: {@link #run} does what {@code psql -f} does (its variables
 * through {@link PsqlScript}, then one statement at a time, so that {@code BEGIN}/{@code COMMIT} and
 * {@code CREATE INDEX CONCURRENTLY} behave as they do for an operator); {@link #psql} runs the real psql,
 * for the test that compares the two.
 */
public final class SqlScript {
    private SqlScript() {
    }

    public static void run(Connection c, Path file) throws SQLException {
        run(c, file, Map.of());
    }

    /** Applies {@code file} with {@code variables} as {@code psql -v name=value ... -f file} would. */
    public static void run(Connection c, Path file, Map<String, String> variables) throws SQLException {
        String text = PsqlScript.render(file, variables);
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

    /** The statements of a script, split on semicolons outside quotes, dollar quotes and comments. */
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
            } else if (c == '\'' || c == '"') {
                int end = text.indexOf(c, i + 1);
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

    /** Whether a psql binary is on the PATH. */
    public static boolean psqlAvailable() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "psql"))) {
                return true;
            }
        }
        return false;
    }

    /** Runs {@code psql -v ON_ERROR_STOP=1 -v name=value ... -f file} against {@code db}; fails on any error. */
    public static void psql(TestDatabase db, Path file, Map<String, String> variables) {
        List<String> cmd = new ArrayList<>(List.of("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"));
        variables.forEach((name, value) -> cmd.addAll(List.of("-v", name + "=" + value)));
        String url = db.jdbcUrl().substring("jdbc:".length());
        cmd.addAll(List.of("-f", file.toString(), url + (url.contains("?") ? "&" : "?") + "user=" + db.user()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (db.password() != null) {
            pb.environment().put("PGPASSWORD", db.password());
        }
        try {
            Process p = pb.start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("psql did not finish in 120 s: " + cmd);
            }
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException("psql exited with " + p.exitValue() + ": " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
