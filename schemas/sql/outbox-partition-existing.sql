-- Turns a plain outbox that holds rows into one partitioned by day (docs/partitioned-outbox.md, "From a plain
-- table"), keeping every row, its seq and its state: the old table becomes the first partition, covering every
-- day up to its newest row, and new days get partitions of their own. One transaction; stop the writers and
-- pause the connector first (it holds an exclusive lock on the table while it scans it once).
--   psql -v ON_ERROR_STOP=1 -f schemas/sql/outbox-partition-existing.sql
--   psql -v ON_ERROR_STOP=1 -v table=app.events -v channel=app_outbox -f schemas/sql/outbox-partition-existing.sql
-- The old table stays as <table>_legacy, a partition that retention drops once its last row is fanned out and
-- older than outbox.retention.ms.

\if :{?table}
\else
\set table events
\endif
\if :{?channel}
\else
\set channel outbox_events
\endif
\set partitioned daily
SET outbox_relay.outbox_table = :'table';

BEGIN;

DO $legacy$
DECLARE
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = tbl::regclass) <> 'r' THEN
    RAISE EXCEPTION '% is not a plain table', tbl;
  END IF;
  EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
  -- out of the way of what outbox.sql makes next: the views, the trigger, the keys and the indexes' names
  EXECUTE format('DROP VIEW IF EXISTS %I.%I, %I.%I', s, n || '_pending', s, n || '_poisoned');
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', n || '_notify_insert', tbl);
  EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I, DROP CONSTRAINT IF EXISTS %I', tbl, n || '_id_key',
    n || '_pkey');
  -- the claim's index of V10 (seq, then the subject's hash) becomes the old table's part of the new one as it is
  -- attached; one from before V10 (seq alone) does not match it, so ATTACH builds that part and this one goes
  IF (SELECT i.indnkeyatts FROM pg_index i WHERE i.indexrelid = to_regclass(format('%I.%I', s, n || '_unfanned_idx')))
     = 1 THEN
    EXECUTE format('DROP INDEX %I.%I', s, n || '_unfanned_idx');
  END IF;
  EXECUTE format('ALTER INDEX IF EXISTS %I.%I RENAME TO %I', s, n || '_unfanned_idx', n || '_legacy_unfanned_idx');
  EXECUTE format('ALTER INDEX IF EXISTS %I.%I RENAME TO %I', s, n || '_poisoned_idx', n || '_legacy_poisoned_idx');
  EXECUTE format('ALTER TABLE %s RENAME TO %I', tbl, n || '_legacy');
END;
$legacy$;

-- the partitioned table, empty, with every object of outbox.sql
\ir outbox.sql

DO $attach$
DECLARE
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  legacy text := format('%I.%I', s, n || '_legacy');
  newest timestamptz;
  upper_bound timestamptz;
  p record;
BEGIN
  -- seq goes on from the old rows', and their ids count for uniqueness
  EXECUTE format('SELECT max(occurred_at) FROM %s', legacy) INTO newest;
  EXECUTE format('SELECT setval(%L, GREATEST((SELECT max(seq) FROM %s), 1))', pg_get_serial_sequence(tbl, 'seq'),
    legacy);
  EXECUTE format('INSERT INTO %I.%I (id) SELECT id FROM %s', s, n || '_ids', legacy);
  -- the old table covers every day up to the one after its newest row; the day partitions it overlaps are new
  -- and empty, and go
  upper_bound := (GREATEST((COALESCE(newest, now()) AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date) + 1)
    ::timestamp AT TIME ZONE 'UTC';
  FOR p IN SELECT c.oid::regclass::text AS part FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = tbl::regclass AND c.relname LIKE n || '\_p%'
              AND substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''([^'']+)''\)')::timestamptz < upper_bound
  LOOP
    EXECUTE format('DROP TABLE %s', p.part);
  END LOOP;
  EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (MINVALUE) TO (%L)', tbl, legacy, upper_bound);
  EXECUTE format('SELECT %I.%I(7)', s, n || '_partitions_ahead');
END;
$attach$;

COMMIT;
