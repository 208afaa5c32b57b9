-- Outbox table for the Outbox Relay connector (io.outboxrelay.connector.OutboxSourceConnector).
-- Apply once per database, with the connector's outbox.table and outbox.notify.channel as variables:
--   psql -v ON_ERROR_STOP=1 -f schemas/sql/outbox.sql                       (table events, channel outbox_events)
--   psql -v ON_ERROR_STOP=1 -v table=app.events -v channel=app_outbox -f schemas/sql/outbox.sql
-- `table` is read as the relay reads outbox.table: an optional schema, one dot, the table; both as written
-- (not case-folded). Every object below is named after the table and created in its schema (the schema
-- too, when missing). Safe to re-run: every object is created only when missing, functions, views and the
-- trigger are replaced. The blocks below are, to the letter, the versioned migrations
-- schemas/migrations/flyway/V1__outbox.sql, V2__outbox_wakeup.sql, V3__outbox_operator_sql.sql,
-- V4__outbox_wakeup_clears.sql and V7__outbox_subject_order.sql, which
-- Flyway and Liquibase users apply instead (README "Upgrading"); SchemaMigrationsIT keeps them equal.
--
-- Row lifecycle (docs/row-lifecycle.md):
--   pending  (fanned_out_at NULL, poisoned_at NULL, lease free)
--   leased   (lease_owner/lease_until set by a claim; attempts + 1)
--   fanned   (fanned_out_at + fanout set after every subscriber record was acknowledged)
--   poisoned (poisoned_at + last_error; left out of every claim until <table>_requeue(seq))
--
-- Objects, for table events in schema public (the defaults):
--   events                 the outbox, with its partial indexes events_unfanned_idx, events_poisoned_idx and
--                          events_subject_pending_idx (outbox.ordering=strict reads it)
--   events_wakeup          the wake-up flag the relay arms (a sequence)
--   events_wakeup_clears   how often a writer took the flag down (a sequence the relay reads)
--   events_notify()        the trigger function, attached as events_notify_insert with the channel
--   events_requeue(seq)    puts one poisoned row back in line
--   events_requeue_matching(type_pattern, poisoned_from, poisoned_to)  the same in bulk
--   events_pending         view: rows still to fan out, with age and attempts
--   events_poisoned        view: poisoned rows, with the reason
--   outbox_relay           the group role the connector's login role joins

\if :{?table}
\else
\set table events
\endif
\if :{?channel}
\else
\set channel outbox_events
\endif
-- The names reach the DDL below as settings of this session, so that no name is ever pasted into SQL
-- unquoted: every statement is built with format() and %I / %L.
SET outbox_relay.outbox_table = :'table';
SET outbox_relay.notify_channel = :'channel';

DO $outbox$
DECLARE
  -- The names: psql -v table=... -v channel=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  ch text := COALESCE(NULLIF(current_setting('outbox_relay.notify_channel', true), ''), 'outbox_events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', s);

  EXECUTE format($ddl$
    CREATE TABLE IF NOT EXISTS %1$s (
      seq             BIGSERIAL PRIMARY KEY,
      id              UUID NOT NULL DEFAULT gen_random_uuid(),
      type            TEXT NOT NULL,
      subject         TEXT NOT NULL,
      payload         JSONB NOT NULL DEFAULT '{}',
      headers         JSONB,
      occurred_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
      fanned_out_at   TIMESTAMPTZ,
      fanout          JSONB,
      attempts        INT NOT NULL DEFAULT 0,
      next_attempt_at TIMESTAMPTZ,
      last_error      TEXT,
      poisoned_at     TIMESTAMPTZ,
      lease_owner     TEXT,
      lease_until     TIMESTAMPTZ,
      CONSTRAINT %2$I UNIQUE (id),
      CONSTRAINT %3$I CHECK (subject <> ''),
      CONSTRAINT %4$I CHECK (type <> ''),
      CONSTRAINT %5$I CHECK (attempts >= 0)
    )
    -- Free space in each page lets the claim's lease UPDATE stay HOT (it changes no indexed column),
    -- which measured 1.4-1.6x faster claims; the table stays small when retention is on.
    WITH (fillfactor = 50,
          autovacuum_vacuum_scale_factor = 0.01,
          autovacuum_vacuum_insert_scale_factor = 0.05,
          autovacuum_analyze_scale_factor = 0.02)
  $ddl$, tbl, n || '_id_key', n || '_subject_not_empty', n || '_type_not_empty', n || '_attempts_not_negative');

  -- The claim reads exactly this predicate in seq order.
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL',
    n || '_unfanned_idx', tbl);
  -- Operators look poisoned rows up by this; small because poisoned rows are rare.
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (seq) WHERE poisoned_at IS NOT NULL',
    n || '_poisoned_idx', tbl);

  -- One NOTIFY per inserting statement (not per row) wakes every relay task (V2 makes it conditional).
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I() RETURNS trigger
    LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
      RETURN NULL;
    END;
    $fn$
  $ddl$, s, n || '_notify');
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', n || '_notify_insert', tbl);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s FOR EACH STATEMENT EXECUTE FUNCTION %I.%I(%L)',
    n || '_notify_insert', tbl, s, n || '_notify', ch);

  -- Put a poisoned row back in line and wake the relay. Returns true when the row was poisoned and is now
  -- pending. Usage: SELECT events_requeue(42);
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(p_seq BIGINT) RETURNS BOOLEAN
    LANGUAGE plpgsql AS $fn$
    DECLARE
      changed BOOLEAN;
    BEGIN
      UPDATE %3$s
         SET poisoned_at = NULL, attempts = 0, last_error = NULL, next_attempt_at = NULL,
             lease_owner = NULL, lease_until = NULL
       WHERE seq = p_seq AND poisoned_at IS NOT NULL AND fanned_out_at IS NULL;
      changed := FOUND;
      IF changed THEN
        PERFORM pg_notify(%4$L, '');
      END IF;
      RETURN changed;
    END;
    $fn$
  $ddl$, s, n || '_requeue', tbl, ch);

  -- Least privilege: the connector needs USAGE on the schema, SELECT and UPDATE on the outbox and on its
  -- wake-up flag (V2; LISTEN and NOTIFY need no grant). Create a login role in this group, e.g.
  --   CREATE ROLE relay LOGIN PASSWORD '...' IN ROLE outbox_relay;
  -- With outbox.retention.ms set, also: GRANT DELETE ON <table> TO outbox_relay;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_relay') THEN
    CREATE ROLE outbox_relay NOLOGIN;
  END IF;
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO outbox_relay', s);
  EXECUTE format('GRANT SELECT, UPDATE ON %s TO outbox_relay', tbl);
END;
$outbox$;

DO $outbox$
DECLARE
  -- The names: psql -v table=... -v channel=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  ch text := COALESCE(NULLIF(current_setting('outbox_relay.notify_channel', true), ''), 'outbox_events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  -- The wake-up flag: 1 while a relay task waits for a NOTIFY, 0 while every task is busy. A sequence,
  -- because sequences are not transactional: a writer reads the flag as it is at that moment, whatever
  -- its transaction's snapshot, and sees a task's arming at once. The trigger below NOTIFYs only while the
  -- flag is 1, and clears it: PostgreSQL orders notifying commits with one database-wide lock held through
  -- the commit's flush, so a NOTIFY per commit would serialize the application's durable commits; a busy
  -- relay costs writers no NOTIFY at all. The relay finds it as <outbox.table>_wakeup. How a task arms it
  -- without missing a row: README "Wake-up".
  EXECUTE format('CREATE SEQUENCE IF NOT EXISTS %I.%I AS smallint MINVALUE 0 MAXVALUE 1 START WITH 0 NO CYCLE',
    s, n || '_wakeup');
  EXECUTE format('GRANT SELECT, UPDATE ON SEQUENCE %I.%I TO outbox_relay', s, n || '_wakeup');

  -- One statement-level trigger per inserting statement. It runs as its owner (writers need no grant on
  -- the flag) with a fixed search_path, and finds the flag next to the table it fires on. A table without
  -- its flag (made by an older outbox.sql) gets a NOTIFY on every insert, as before.
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
    DECLARE
      flag regclass := to_regclass(format('%%I.%%I', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_wakeup'));
    BEGIN
      IF flag IS NULL THEN
        PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
      ELSIF pg_sequence_last_value(flag) = 1 THEN
        PERFORM setval(flag, 0, true);
        PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
      END IF;
      RETURN NULL;
    END;
    $fn$
  $ddl$, s, n || '_notify');
END;
$outbox$;

DO $outbox$
DECLARE
  -- The names: psql -v table=... -v channel=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  ch text := COALESCE(NULLIF(current_setting('outbox_relay.notify_channel', true), ''), 'outbox_events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  -- The columns of the event's fields: outbox.sql's own, or an adopted table's (outbox-adopt-existing.sql
  -- sets these settings from its psql variables column_id, column_type, column_subject, column_occurred_at).
  c_id text := COALESCE(NULLIF(current_setting('outbox_relay.column_id', true), ''), 'id');
  c_type text := COALESCE(NULLIF(current_setting('outbox_relay.column_type', true), ''), 'type');
  c_subject text := COALESCE(NULLIF(current_setting('outbox_relay.column_subject', true), ''), 'subject');
  c_occurred text := COALESCE(NULLIF(current_setting('outbox_relay.column_occurred_at', true), ''), 'occurred_at');
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  -- The same in bulk: every poisoned row whose type matches the LIKE pattern and that was poisoned in
  -- [poisoned_from, poisoned_to) (NULL: unbounded) goes back in line, the relay is woken once, and the
  -- seqs come back. Usage: SELECT * FROM events_requeue_matching('order.%', now() - interval '1 hour', NULL);
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(type_pattern TEXT, poisoned_from TIMESTAMPTZ DEFAULT NULL,
                                         poisoned_to TIMESTAMPTZ DEFAULT NULL) RETURNS SETOF BIGINT
    LANGUAGE plpgsql AS $fn$
    BEGIN
      RETURN QUERY
      WITH r AS (
        UPDATE %3$s
           SET poisoned_at = NULL, attempts = 0, last_error = NULL, next_attempt_at = NULL,
               lease_owner = NULL, lease_until = NULL
         WHERE poisoned_at IS NOT NULL AND fanned_out_at IS NULL AND %5$I::text LIKE type_pattern
           AND (poisoned_from IS NULL OR poisoned_at >= poisoned_from)
           AND (poisoned_to IS NULL OR poisoned_at < poisoned_to)
        RETURNING seq)
      SELECT seq FROM r ORDER BY seq;
      IF FOUND THEN
        PERFORM pg_notify(%4$L, '');
      END IF;
    END;
    $fn$
  $ddl$, s, n || '_requeue_matching', tbl, ch, c_type);

  -- For operators (README "Runbook"): what is still to fan out, and why a row is poisoned.
  EXECUTE format($ddl$
    CREATE OR REPLACE VIEW %1$I.%2$I AS
    SELECT seq, %4$I AS id, %5$I AS type, %6$I AS subject, %7$I AS occurred_at, now() - %7$I AS age, attempts,
           next_attempt_at, last_error, lease_owner, lease_until
      FROM %3$s
     WHERE fanned_out_at IS NULL AND poisoned_at IS NULL
  $ddl$, s, n || '_pending', tbl, c_id, c_type, c_subject, c_occurred);
  EXECUTE format($ddl$
    CREATE OR REPLACE VIEW %1$I.%2$I AS
    SELECT seq, %4$I AS id, %5$I AS type, %6$I AS subject, %7$I AS occurred_at, poisoned_at, attempts,
           last_error AS reason
      FROM %3$s
     WHERE poisoned_at IS NOT NULL AND fanned_out_at IS NULL
  $ddl$, s, n || '_poisoned', tbl, c_id, c_type, c_subject, c_occurred);
END;
$outbox$;

DO $outbox$
DECLARE
  -- The names: psql -v table=... -v channel=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  -- How often a writer has taken the flag down. A relay task that waits reads it: when it moved since the
  -- task armed the flag, a writer cleared it, and the task claims whether or not that writer's NOTIFY reached
  -- it (the writer rolled back, the NOTIFY queue was too full for it, LISTEN was down, or another task armed
  -- the flag again since). Not transactional, like the flag: a clear counts at once, rolled back or not.
  EXECUTE format('CREATE SEQUENCE IF NOT EXISTS %I.%I AS bigint', s, n || '_wakeup_clears');
  EXECUTE format('GRANT SELECT ON SEQUENCE %I.%I TO outbox_relay', s, n || '_wakeup_clears');

  -- Once per inserting statement, as its owner (writers need no grant on the sequences). While the flag is 1
  -- a relay task waits: take it down, count the clear, then NOTIFY, unless the queue is over half full (a
  -- NOTIFY that finds it full fails the application's commit; the count tells the relay instead). Reading the
  -- queue needs EXECUTE on pg_notification_queue_usage(), which PostgreSQL grants to PUBLIC: where an owner
  -- lacks it, the trigger NOTIFYs as before V4 rather than fail the insert. While the flag is 0 every task is
  -- busy, and the insert pays one read of a sequence.
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      IF pg_sequence_last_value(%3$L::regclass) = 1 THEN
        PERFORM setval(%3$L::regclass, 0, true);
        PERFORM nextval(%4$L::regclass);
        -- nested, not OR'd: an expression that names the function needs EXECUTE on it to be prepared at all
        IF NOT has_function_privilege('pg_catalog.pg_notification_queue_usage()', 'EXECUTE') THEN
          PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
        ELSIF pg_notification_queue_usage() <= 0.5 THEN
          PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
        END IF;
      END IF;
      RETURN NULL;
    END;
    $fn$
  $ddl$, s, n || '_notify', format('%I.%I', s, n || '_wakeup'), format('%I.%I', s, n || '_wakeup_clears'));
END;
$outbox$;

DO $outbox$
DECLARE
  -- The names: psql -v table=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  c_subject text := COALESCE(NULLIF(current_setting('outbox_relay.column_subject', true), ''), 'subject');
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  -- Strict order's probe: is an earlier row of this subject still pending? Partial like the claim's index, so
  -- it holds the rows in line only.
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I (%I, seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL',
    n || '_subject_pending_idx', s, n, c_subject);
END;
$outbox$;
