package io.outboxrelay.connector.integration;

import io.outboxrelay.testsupport.TestDatabase;
import java.util.List;

/** What a schema file made in a database, as text to compare. */
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
                       s.seqmin, s.seqmax, s.seqcycle) || coalesce(' ' || c.relacl::text, '')
                FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = ?::regnamespace
              UNION ALL
              SELECT 'schema ' || nspname || ' ' || coalesce(nspacl::text, '') FROM pg_namespace WHERE nspname = ?
            ) x ORDER BY line
            """, schema, schema, schema, schema, schema, schema, schema, schema, schema);
        return rows.stream().map(r -> (String) r.get(0)).toList();
    }
}
