-- Adopts an existing outbox table for the Outbox Relay connector without changing its writers, for
-- instance the table Debezium's Outbox Event Router reads (id, aggregatetype, aggregateid, type, payload).
-- Apply once, with the connector's outbox.table and outbox.notify.channel as for outbox.sql, plus the
-- table's own columns where they differ from outbox.sql's (the connector's outbox.column.* keys):
--   psql -v ON_ERROR_STOP=1 -v table=outbox -v channel=outbox_events -v column_subject=aggregateid \
--        -f schemas/sql/outbox-adopt-existing.sql
-- Variables: table (default events; optionally schema.table), channel (outbox_events), and the columns
-- column_id (id), column_type (type), column_subject (subject), column_occurred_at (occurred_at), which
-- the operators' views and the bulk requeue read. The connector for Debezium's table then sets
-- outbox.table=outbox, outbox.column.subject=aggregateid and outbox.column.headers= (empty: no headers
-- column); config-examples/outbox-relay-debezium-table.json is such a config.
--
-- WRITERS MUST NOT DELETE THEIR ROWS. Many Debezium users insert the outbox row and delete it in the same
-- transaction (Debezium reads the insert from the WAL). The relay reads the table: it never sees such a
-- row, and that event is lost to it. Stop the DELETE before you switch; the relay's retention
-- (outbox.retention.ms) deletes rows once they are fanned out. A job that deletes rows by age must stop
-- too, or it may delete rows the relay has not fanned out yet.
--
-- What it does. First, in one statement (one transaction), to the table:
--   - adds the relay's state columns: seq BIGSERIAL with a unique index <table>_seq_key (the claim and
--     the stamp find rows by it; existing rows are numbered in no particular order), fanned_out_at,
--     fanout, attempts, next_attempt_at, last_error, poisoned_at, lease_owner, lease_until;
--   - ROWS ALREADY IN THE TABLE COUNT AS FANNED (fanned_out_at = the time of this migration, fanout NULL):
--     whatever relayed the table until now delivered them, so switching from Debezium replays no history.
--     That holds only while the previous relay keeps running until it has delivered every row committed
--     before this migration: stop it first and the rows it had not delivered yet are lost to both (README
--     "Adopting an existing outbox table": migrate, start the relay, then remove the previous one).
--     Rows committed after this migration are pending and the relay's. Only the run that adds
--     fanned_out_at marks rows: a re-run marks nothing;
--   - adds occurred_at TIMESTAMPTZ NOT NULL DEFAULT now() when the table has none and column_occurred_at
--     is not given: the record timestamp of a new row is its inserting transaction's start (writers need
--     not name the column); rows already there get the time of this migration;
--   - sets the storage parameters outbox.sql sets (fillfactor 50 keeps the claims' lease updates HOT);
--   - grants USAGE on seq's new sequence to every role that may INSERT into the table, whose inserts
--     now draw a seq from it.
-- Then it runs outbox.sql (beside this file), which finds the table and adds only what it lacks: the
-- claim's partial index, the NOTIFY trigger and the wake-up flag, the requeue functions, the operators'
-- views and the outbox_relay role with its grants.
--
-- Locks: adding seq writes every row once, under an ACCESS EXCLUSIVE lock; writers wait until the
-- migration commits (milliseconds on a table whose rows are deleted; plan for it on a big one). Behind a
-- long transaction on the table the ALTER waits, and every writer queues behind it: to give up instead, run
-- it with PGOPTIONS='-c lock_timeout=5s' and again later. Safe to re-run. README "Adopting an existing outbox table" has the whole switch from Debezium, step by step.

\if :{?table}
\else
\set table events
\endif
\if :{?channel}
\else
\set channel outbox_events
\endif
\if :{?column_id}
\else
\set column_id id
\endif
\if :{?column_type}
\else
\set column_type type
\endif
\if :{?column_subject}
\else
\set column_subject subject
\endif
\if :{?column_occurred_at}
\else
\set column_occurred_at occurred_at
\endif
-- As in outbox.sql, the names reach the DDL as settings of this session, never pasted into SQL.
SET outbox_relay.outbox_table = :'table';
SET outbox_relay.notify_channel = :'channel';
SET outbox_relay.column_id = :'column_id';
SET outbox_relay.column_type = :'column_type';
SET outbox_relay.column_subject = :'column_subject';
SET outbox_relay.column_occurred_at = :'column_occurred_at';

DO $adopt$
DECLARE
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  rel regclass := to_regclass(tbl);
  occurred text := current_setting('outbox_relay.column_occurred_at');
  field text;
  col text;
  changes text[] := ARRAY[]::text[];  -- one ALTER TABLE, so that the marking and the columns commit together
  writer oid;
BEGIN
  IF rel IS NULL THEN
    RAISE EXCEPTION 'table % does not exist: this script adopts an existing table; create a new one with outbox.sql', tbl;
  END IF;
  -- the columns the views will read must be there, before anything changes
  FOREACH field IN ARRAY ARRAY['column_id', 'column_type', 'column_subject'] LOOP
    col := current_setting('outbox_relay.' || field);
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = rel AND attname = col AND attnum > 0 AND NOT attisdropped) THEN
      RAISE EXCEPTION 'table % has no column % (psql variable %): pass -v %=<the column>', tbl, col, field, field;
    END IF;
  END LOOP;
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = rel AND attname = occurred AND attnum > 0 AND NOT attisdropped) THEN
    IF occurred <> 'occurred_at' THEN
      RAISE EXCEPTION 'table % has no column % (psql variable column_occurred_at)', tbl, occurred;
    END IF;
    changes := changes || 'ADD COLUMN occurred_at TIMESTAMPTZ NOT NULL DEFAULT now()'::text;
  END IF;

  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = rel AND attname = 'fanned_out_at' AND NOT attisdropped) THEN
    -- Every row there now was delivered by whatever relayed the table so far: it counts as fanned. The
    -- default fills the rows the ALTER finds and is dropped below, in this same transaction, so no row
    -- inserted after the commit can take it (concurrent inserts wait for the ALTER's lock).
    changes := changes || 'ADD COLUMN fanned_out_at TIMESTAMPTZ DEFAULT now()'::text;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = rel AND attname = 'seq' AND NOT attisdropped) THEN
    changes := changes || format('ADD COLUMN seq BIGSERIAL CONSTRAINT %I UNIQUE', n || '_seq_key');
  END IF;
  changes := changes || ARRAY[
    'ADD COLUMN IF NOT EXISTS fanout JSONB',
    'ADD COLUMN IF NOT EXISTS attempts INT NOT NULL DEFAULT 0',
    'ADD COLUMN IF NOT EXISTS next_attempt_at TIMESTAMPTZ',
    'ADD COLUMN IF NOT EXISTS last_error TEXT',
    'ADD COLUMN IF NOT EXISTS poisoned_at TIMESTAMPTZ',
    'ADD COLUMN IF NOT EXISTS lease_owner TEXT',
    'ADD COLUMN IF NOT EXISTS lease_until TIMESTAMPTZ',
    -- as outbox.sql makes the table (see there why)
    'SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.05,'
      || ' autovacuum_analyze_scale_factor = 0.02)'];
  EXECUTE format('ALTER TABLE %s ', tbl) || array_to_string(changes, ', ');
  EXECUTE format('ALTER TABLE %s ALTER COLUMN fanned_out_at DROP DEFAULT', tbl);

  -- writers keep inserting without naming seq: their roles now draw it from its sequence
  FOR writer IN SELECT DISTINCT a.grantee FROM pg_class c, aclexplode(c.relacl) a
                 WHERE c.oid = rel AND a.privilege_type = 'INSERT' AND a.grantee <> c.relowner LOOP
    IF pg_get_serial_sequence(tbl, 'seq') IS NOT NULL THEN
      EXECUTE format('GRANT USAGE ON SEQUENCE %s TO %s', pg_get_serial_sequence(tbl, 'seq'),
        CASE WHEN writer = 0 THEN 'PUBLIC' ELSE writer::regrole::text END);
    END IF;
  END LOOP;
END;
$adopt$;

-- The index, trigger, wake-up flag, functions, views, role and grants: what outbox.sql makes, made by it.
\ir outbox.sql
