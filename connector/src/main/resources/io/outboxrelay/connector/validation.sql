-- Named statements of the connector's validate() (OutboxLiveValidator, OutboxColumnChecks): read-only looks
-- at the catalog. :table is the quoted, configured table name (Identifiers.quoteQualified), bound as text
-- and resolved by the server (::regclass), never spliced into the SQL.

-- name: TableRegclass
-- The table as the server resolves it with this role's search_path, or NULL when there is none.
SELECT to_regclass(:table)::text;

-- name: TablePrivileges
-- What the relay needs of the table: SELECT and UPDATE always, and with retention DELETE, or on a table
-- partitioned by V5 (which retains by dropping partitions, PartitionUpkeep) EXECUTE on <table>_drop_partitions;
-- and who asks.
SELECT has_table_privilege(:table::regclass, 'SELECT'), has_table_privilege(:table::regclass, 'UPDATE'),
       current_user::text,
       COALESCE(has_function_privilege(
                  to_regprocedure((SELECT quote_ident(n.nspname) || '.' || quote_ident(t.relname || '_drop_partitions')
                                     FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace
                                    WHERE t.oid = :table::regclass) || '(timestamp with time zone)'), 'EXECUTE'),
                has_table_privilege(:table::regclass, 'DELETE'));

-- name: UniqueSeqIndex
-- Whether seq is unique (a valid, non-partial unique index on seq alone, or on a table partitioned by V5 the
-- unique key (seq, occurred_at), which holds the partition key: seq's sequence keeps seq unique), and the name
-- to suggest for one.
SELECT EXISTS (SELECT 1 FROM pg_index i
                WHERE i.indrelid = :table::regclass AND i.indisunique AND i.indisvalid AND i.indpred IS NULL
                  AND (i.indnkeyatts = 1
                       OR i.indnkeyatts = 1 + (SELECT partnatts FROM pg_partitioned_table WHERE partrelid = i.indrelid))
                  AND i.indkey[0] = (SELECT attnum FROM pg_attribute
                                      WHERE attrelid = i.indrelid AND attname = 'seq')),
       quote_ident((SELECT relname FROM pg_class WHERE oid = :table::regclass) || '_seq_key');

-- name: NotifyTriggers
-- The table's enabled user triggers that fire on INSERT (tgtype bit 4) and whose function mentions notify:
-- name, arguments (pg_trigger.tgargs, NUL-terminated) and the function's source.
SELECT t.tgname::text, t.tgargs, p.prosrc
  FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
 WHERE t.tgrelid = :table::regclass AND NOT t.tgisinternal AND t.tgenabled <> 'D' AND (t.tgtype & 4) <> 0
   AND p.prosrc ~* 'notify'
 ORDER BY 1;

-- name: PartialSeqIndexPredicates
-- The predicate of every valid partial index whose first column is seq, for the claim's index, and its second key
-- as PostgreSQL prints it (NULL without one; the claim's index of migration V10: the subject's hash).
SELECT pg_get_expr(i.indpred, i.indrelid), CASE WHEN i.indnkeyatts > 1 THEN pg_get_indexdef(i.indexrelid, 2, false) END
  FROM pg_index i
 WHERE i.indrelid = :table::regclass AND i.indisvalid AND i.indpred IS NOT NULL
   AND i.indkey[0] = (SELECT attnum FROM pg_attribute WHERE attrelid = i.indrelid AND attname = 'seq');

-- name: SubjectSeqIndexPredicates
-- For outbox.ordering=strict (docs/ordering.md): every valid partial index whose keys start with an expression
-- and then seq, with that first key as PostgreSQL prints it and the index's predicate; the task looks for the hash
-- of its subject column (migration V7).
SELECT pg_get_indexdef(i.indexrelid, 1, false), pg_get_expr(i.indpred, i.indrelid)
  FROM pg_index i
 WHERE i.indrelid = :table::regclass AND i.indisvalid AND i.indpred IS NOT NULL AND i.indnkeyatts >= 2
   AND i.indkey[0] = 0
   AND i.indkey[1] = (SELECT attnum FROM pg_attribute WHERE attrelid = i.indrelid AND attname = 'seq');

-- name: ClaimIndexNameAndFillfactor
-- The name to suggest for the claim's index, and the table's fillfactor (NULL when not set: 100); a
-- partitioned table has none of its own, so its newest partition's (by name) is read.
SELECT quote_ident(t.relname || '_unfanned_idx'),
       (SELECT substr(o, 12)
          FROM unnest(COALESCE(t.reloptions, (SELECT p.reloptions FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
                                               WHERE i.inhparent = t.oid ORDER BY p.relname DESC LIMIT 1))) o
         WHERE o LIKE 'fillfactor=%')
  FROM pg_class t
 WHERE t.oid = :table::regclass;

-- name: TableColumns
-- The table's live columns in order: name, type (a domain's base type, without modifiers), NOT NULL, and
-- whether that type is an enum.
SELECT a.attname, format_type(b.oid, NULL), a.attnotnull, b.typtype = 'e'
  FROM pg_attribute a
  JOIN pg_type t ON t.oid = a.atttypid
  JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
 WHERE a.attrelid = :table::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;

-- name: MentionTables
-- With mentions.enabled=true: each table the mention-recovery task reads or writes, as this role's search path
-- finds it, whether it exists, and whether the role may use it as the task does (schemas/sql/mentions.sql grants
-- that to outbox_relay). A grant on some of a table's columns counts (the task reads only some of them), so a role
-- given column grants is never refused. The marker column's UPDATE is only asked of a messages table that has it.
-- A table the search path does not find may be in a schema of the search path that the role may not use (the
-- search path skips those): such schemas are named, for a GRANT USAGE instead of "apply mentions.sql".
SELECT t.name, t.privilege || CASE WHEN t.privilege = 'UPDATE' THEN ' (mentions_routed_at)' ELSE '' END AS privilege,
       to_regclass(t.name) IS NOT NULL AS present,
       CASE WHEN to_regclass(t.name) IS NULL THEN NULL
            WHEN t.privilege <> 'UPDATE' THEN has_any_column_privilege(to_regclass(t.name), t.privilege)
            WHEN EXISTS (SELECT 1 FROM pg_attribute a
                          WHERE a.attrelid = to_regclass(t.name) AND a.attname = 'mentions_routed_at'
                            AND NOT a.attisdropped)
            THEN has_column_privilege(to_regclass(t.name), 'mentions_routed_at', 'UPDATE') END AS allowed,
       current_user::text,
       CASE WHEN to_regclass(t.name) IS NULL
            THEN (SELECT array_agg(DISTINCT quote_ident(n.nspname) ORDER BY quote_ident(n.nspname))
                    FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace
                   WHERE k.relname = t.name AND k.relkind IN ('r', 'p', 'v', 'f')
                     AND NOT has_schema_privilege(n.oid, 'USAGE')
                     AND n.nspname IN (SELECT CASE WHEN p.name = '$user' THEN current_user::text ELSE p.name END
                                         FROM unnest(string_to_array(current_setting('search_path'), ',')) AS e(entry),
                                              LATERAL (SELECT CASE WHEN btrim(e.entry) LIKE '"%'
                                                                   THEN replace(btrim(btrim(e.entry), '"'), '""', '"')
                                                                   ELSE lower(btrim(e.entry)) END AS name) p)) END
         AS unusable_schemas
  FROM (VALUES (1, 'messages', 'SELECT'), (2, 'messages', 'UPDATE'), (3, 'topics', 'SELECT'), (4, 'channels', 'SELECT'),
               (5, 'held_messages', 'SELECT'), (6, 'agent_sessions', 'SELECT'), (7, 'channel_members', 'SELECT'),
               (8, 'accounts', 'SELECT'), (9, 'owed_mentions', 'INSERT')) AS t(n, name, privilege)
 ORDER BY t.n;
