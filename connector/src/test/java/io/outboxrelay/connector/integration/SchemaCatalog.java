package io.outboxrelay.connector.integration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** What a schema file made in a database, as text to compare, and a real psql to apply it with. */
final class SchemaCatalog {
    private SchemaCatalog() {
    }

    /**
     * Every object in {@code schema} that the schema files make, one line each with its full definition
     * as PostgreSQL prints it back: columns, constraints, indexes, triggers, functions, views, sequences,
     * storage parameters and privileges. Two databases with equal lists hold the same schema.
     */
    static List<String> of(TestDatabase db, String schema) {
        List<List<Object>> rows = db.query("""
            SELECT line FROM (
              SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.reloptions::text, '')
                       || ' ' || coalesce(c.relacl::text, '') AS line
                FROM pg_class c WHERE c.relnamespace = ?::regnamespace
              UNION ALL
              SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                       || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
               WHERE c.relnamespace = ?::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
              UNION ALL
              SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(oid)
                FROM pg_constraint WHERE connamespace = ?::regnamespace
              UNION ALL
              SELECT 'index ' || pg_get_indexdef(i.indexrelid)
                FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = ?::regnamespace
              UNION ALL
              SELECT 'trigger ' || pg_get_triggerdef(t.oid)
                FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
               WHERE c.relnamespace = ?::regnamespace AND NOT t.tgisinternal
              UNION ALL
              SELECT 'function ' || pg_get_functiondef(p.oid) || coalesce(p.proacl::text, '')
                FROM pg_proc p WHERE p.pronamespace = ?::regnamespace
              UNION ALL
              SELECT 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid)
                FROM pg_class c WHERE c.relnamespace = ?::regnamespace AND c.relkind = 'v'
              UNION ALL
              SELECT 'sequence ' || c.relname || format(' %s %s %s %s %s', s.seqtypid::regtype, s.seqstart,
                       s.seqmin, s.seqmax, s.seqcycle)
                FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = ?::regnamespace
              UNION ALL
              SELECT 'schema ' || nspname || ' ' || coalesce(nspacl::text, '') FROM pg_namespace WHERE nspname = ?
            ) x ORDER BY line
            """, schema, schema, schema, schema, schema, schema, schema, schema, schema);
        return rows.stream().map(r -> (String) r.get(0)).toList();
    }

    /** Whether a psql binary is on the PATH. */
    static boolean psqlAvailable() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "psql"))) {
                return true;
            }
        }
        return false;
    }

    /** Runs {@code psql -v ON_ERROR_STOP=1 -v name=value ... -f file} against {@code db}; fails on any error. */
    static void psql(TestDatabase db, Path file, Map<String, String> variables) {
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
