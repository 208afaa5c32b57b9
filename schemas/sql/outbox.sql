-- Outbox table for the Outbox Relay connector (io.outboxrelay.connector.OutboxSourceConnector).
-- Apply once per database, with the connector's outbox.table and outbox.notify.channel as variables:
--   psql -v ON_ERROR_STOP=1 -f schemas/sql/outbox.sql                       (table events, channel outbox_events)
--   psql -v ON_ERROR_STOP=1 -v table=app.events -v channel=app_outbox -f schemas/sql/outbox.sql
--   psql -v ON_ERROR_STOP=1 -v partitioned=daily -f schemas/sql/outbox.sql   (partitioned by day of occurred_at,
--                                                   docs/partitioned-outbox.md; without it, a plain table)
-- `table` is read as the relay reads outbox.table: an optional schema, one dot, the table; both as written
-- (not case-folded). Every object below is named after the table and created in its schema (the schema
-- too, when missing). Safe to re-run: every object is created only when missing, functions, views and the
-- trigger are replaced. The eleven blocks below are, to the letter, the versioned migrations
-- schemas/migrations/flyway/V1__outbox.sql, V2__outbox_wakeup.sql, V3__outbox_operator_sql.sql,
-- V4__outbox_wakeup_clears.sql, V5__outbox_partitioned.sql, V6__outbox_replay.sql,
-- V7__outbox_subject_order.sql, V8__outbox_wakeup_when.sql, V9__outbox_wakeup_count_grant.sql,
-- V10__outbox_claim_share_index.sql and V11__outbox_requeue_wakes.sql, which
-- Flyway and Liquibase users apply instead (docs/upgrading.md); SchemaMigrationsIT keeps them equal.
--
-- Row lifecycle (docs/row-lifecycle.md):
--   pending  (fanned_out_at NULL, poisoned_at NULL, lease free)
--   leased   (lease_owner/lease_until set by a claim; attempts + 1)
--   fanned   (fanned_out_at + fanout set after every subscriber record was acknowledged)
--   poisoned (poisoned_at + last_error; left out of every claim until <table>_requeue(seq))
--
-- Objects, for table events in schema public (the defaults):
--   events                 the outbox, with its partial indexes events_unfanned_idx (the claim's: seq, then the
--                          subject's hash, V10), events_poisoned_idx and events_subject_pending_idx
--                          (outbox.ordering=strict reads it)
--   events_wakeup          the wake-up flag the relay arms (a sequence; every role may read it, V8)
--   events_wakeup_clears   how often a writer took the flag down (a sequence the relay reads, and counts a
--                          clear in when it finds the flag down as it arms it, V9)
--   events_notify()        the trigger function, attached as events_notify_insert with the channel; called
--                          only while the flag does not read 0 (V8)
--   events_requeue(seq)    puts one poisoned row back in line
--   events_requeue_matching(type_pattern, poisoned_from, poisoned_to)  the same in bulk
--   events_wake_relay()    wakes every relay task as an insert does (flag down, clear counted, NOTIFY); the
--                          requeues call it (V11)
--   events_pending         view: rows still to fan out, with age and attempts
--   events_poisoned        view: poisoned rows, with the reason
--   outbox_relay           the group role the connector's login role joins
--   events_replays         replay requests (V6), with progress; events_occurred_at_brin finds a range's start
-- and with -v partitioned=daily (V5): events_pYYYYMMDD, events_default, events_ids, events_partitions_ahead(days),
-- events_drop_partitions(older_than)

\if :{?table}
\else
\set table events
\endif
\if :{?channel}
\else
\set channel outbox_events
\endif
\if :{?partitioned}
\else
\set partitioned no
\endif
-- One transaction: a run that fails midway (a refusal below, a lock_timeout) changes nothing. Block by block, the
-- early blocks would put back their versions of the trigger and the requeues, which only the later ones replace.
BEGIN;

-- The names reach the DDL below as settings of this session, so that no name is ever pasted into SQL
-- unquoted: every statement is built with format() and %I / %L.
SET outbox_relay.outbox_table = :'table';
SET outbox_relay.notify_channel = :'channel';
SET outbox_relay.partitioned = :'partitioned';

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
  -- The names: psql -v table=... -v channel=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  ch text := COALESCE(NULLIF(current_setting('outbox_relay.notify_channel', true), ''), 'outbox_events');
  mode text := COALESCE(NULLIF(current_setting('outbox_relay.partitioned', true), ''), 'no');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  kind "char";
  has_rows boolean;
  serial text;
  acl aclitem[];
  grant_row record;
  pending_view text;
  poisoned_view text;
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  IF mode NOT IN ('no', 'daily') THEN
    RAISE EXCEPTION 'outbox_relay.partitioned is %, but the outbox can be partitioned daily or not at all', mode
      USING HINT = 'psql -v partitioned=daily, or leave the variable unset for a plain table';
  END IF;
  SELECT c.relkind INTO kind FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
   WHERE ns.nspname = s AND c.relname = n;
  IF kind IS DISTINCT FROM 'p' AND mode = 'no' THEN
    RETURN; -- a plain table stays as it is
  END IF;

  IF kind = 'r' THEN
    -- A plain table asked to be partitioned: rebuilt while empty, with the same columns, defaults, checks,
    -- sequence, trigger, views and grants; PostgreSQL cannot turn a table with rows into a partitioned one.
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s)', tbl) INTO has_rows;
    IF has_rows THEN
      RAISE EXCEPTION '% holds rows, so it cannot be rebuilt partitioned here', tbl
        USING HINT = 'docs/partitioned-outbox.md, "From a plain table": attach it as the first partition';
    END IF;
    serial := pg_get_serial_sequence(tbl, 'seq');
    SELECT relacl INTO acl FROM pg_class WHERE oid = tbl::regclass;
    pending_view := pg_get_viewdef(to_regclass(format('%I.%I', s, n || '_pending')));
    poisoned_view := pg_get_viewdef(to_regclass(format('%I.%I', s, n || '_poisoned')));
    EXECUTE format('DROP VIEW IF EXISTS %I.%I, %I.%I', s, n || '_pending', s, n || '_poisoned');
    IF serial IS NOT NULL THEN
      EXECUTE format('ALTER SEQUENCE %s OWNED BY NONE', serial);
    END IF;
    EXECUTE format('CREATE TABLE %I.%I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS'
      || ' INCLUDING STORAGE) PARTITION BY RANGE (occurred_at)', s, n || '_v5', tbl);
    -- fails, naming them, when objects other than the operators' views depend on the table
    EXECUTE format('DROP TABLE %s', tbl);
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', s, n || '_v5', n);
    IF serial IS NOT NULL THEN
      EXECUTE format('ALTER SEQUENCE %s OWNED BY %s.seq', serial, tbl);
    END IF;
    -- a unique key of a partitioned table holds its partition key; seq alone is unique by its sequence
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I PRIMARY KEY (seq, occurred_at)', tbl, n || '_pkey');
    EXECUTE format('CREATE INDEX %I ON %s (seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL',
      n || '_unfanned_idx', tbl);
    EXECUTE format('CREATE INDEX %I ON %s (seq) WHERE poisoned_at IS NOT NULL', n || '_poisoned_idx', tbl);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s FOR EACH STATEMENT EXECUTE FUNCTION %I.%I(%L)',
      n || '_notify_insert', tbl, s, n || '_notify', ch);
    IF pending_view IS NOT NULL THEN
      EXECUTE format('CREATE VIEW %I.%I AS %s', s, n || '_pending', pending_view);
    END IF;
    IF poisoned_view IS NOT NULL THEN
      EXECUTE format('CREATE VIEW %I.%I AS %s', s, n || '_poisoned', poisoned_view);
    END IF;
    FOR grant_row IN SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS who,
                            a.privilege_type AS what
                       FROM unnest(acl) g, aclexplode(ARRAY[g]) a LEFT JOIN pg_roles r ON r.oid = a.grantee
                      WHERE a.grantee <> a.grantor LOOP
      EXECUTE format('GRANT %s ON %s TO %s', grant_row.what, tbl, grant_row.who);
    END LOOP;
  END IF;

  -- The id is unique across partitions through this table: a unique key on the outbox itself would have to
  -- hold occurred_at. A row's id is entered as the row is inserted (a duplicate fails the insert, as on a
  -- plain table, under the same constraint name) and leaves with the row or its partition.
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I.%I (id uuid NOT NULL, CONSTRAINT %I PRIMARY KEY (id))',
    s, n || '_ids', n || '_id_key');
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      IF TG_OP IN ('DELETE', 'UPDATE') THEN
        DELETE FROM %3$I.%4$I WHERE id = OLD.id;
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO %3$I.%4$I (id) VALUES (NEW.id);
      END IF;
      RETURN NULL;
    END;
    $fn$
  $ddl$, s, n || '_ids_keep', s, n || '_ids');
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', n || '_ids_keep', tbl);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR DELETE OR UPDATE OF id ON %s FOR EACH ROW EXECUTE FUNCTION %I.%I()',
    n || '_ids_keep', tbl, s, n || '_ids_keep');

  -- A row of a day without its partition lands here, so no insert fails for want of one.
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I.%I PARTITION OF %s DEFAULT WITH (fillfactor = 50)',
    s, n || '_default', tbl);

  -- The partitions of today and the next days (UTC), each with the plain table's storage settings. A day an
  -- operator made by hand (any name) is left as it is; a day the default partition holds rows of is left to
  -- it, with a warning (docs/partitioned-outbox.md). After a new day, the parent is analyzed: autovacuum
  -- never analyzes a partitioned table itself.
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(days int DEFAULT 7) RETURNS int
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s' AS $fn$
    DECLARE
      first_day date := (now() AT TIME ZONE 'UTC')::date;
      made int := 0;
    BEGIN
      IF days IS NULL OR days < 0 OR days > 366 THEN
        RAISE EXCEPTION 'days is %%, but partitions are made 0 to 366 days ahead', days;
      END IF;
      FOR d IN 0..days LOOP
        CONTINUE WHEN to_regclass(format('%%I.%%I', %3$L, %4$L || to_char(first_day + d, 'YYYYMMDD'))) IS NOT NULL;
        BEGIN
          EXECUTE format('CREATE TABLE %%I.%%I PARTITION OF %%s FOR VALUES FROM (%%L) TO (%%L) WITH (fillfactor = 50,'
            || ' autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.05,'
            || ' autovacuum_analyze_scale_factor = 0.02)', %3$L, %4$L || to_char(first_day + d, 'YYYYMMDD'), %5$L,
            (first_day + d)::timestamp AT TIME ZONE 'UTC', (first_day + d + 1)::timestamp AT TIME ZONE 'UTC');
          made := made + 1;
        EXCEPTION
          WHEN invalid_object_definition THEN
            NULL; -- a partition made by hand covers (part of) the day
          WHEN check_violation THEN
            RAISE WARNING 'the default partition of %% holds rows of %%, so that day stays in it', %5$L, first_day + d;
        END;
      END LOOP;
      IF made > 0 OR NOT EXISTS (SELECT 1 FROM pg_statistic WHERE starelid = %5$L::regclass) THEN
        EXECUTE format('ANALYZE %%s', %5$L);
      END IF;
      RETURN made;
    END;
    $fn$
  $ddl$, s, n || '_partitions_ahead', s, n || '_p', tbl);

  -- Retention by partition (the relay calls it with now() - outbox.retention.ms): each partition whose upper
  -- bound is at or before older_than is dropped when it holds no un-fanned row (pending or poisoned), with its
  -- ids; one that does is kept. One row a partition past older_than: what became of it and why. The table is
  -- locked while it looks, only when some partition is past older_than (once a day).
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(older_than timestamptz)
      RETURNS TABLE (partition_name text, upper_bound timestamptz, dropped boolean, pending bigint, poisoned bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
    -- its own plans, not the relay session's (which turns sequential and bitmap scans off): it reads whole partitions
    SET enable_seqscan = on SET enable_bitmapscan = on AS $fn$
    DECLARE
      locked boolean := false;
      p record;
    BEGIN
      FOR p IN SELECT c.oid::regclass::text AS part, c.relname::text AS rel,
                      substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)')::timestamptz AS upper
                 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = %3$L::regclass
                ORDER BY 3 LOOP
        CONTINUE WHEN p.upper IS NULL OR p.upper > older_than;
        IF NOT locked THEN
          EXECUTE format('LOCK TABLE %%s IN ACCESS EXCLUSIVE MODE', %3$L);
          locked := true;
        END IF;
        partition_name := p.rel;
        upper_bound := p.upper;
        EXECUTE format('SELECT count(*) FROM %%s WHERE fanned_out_at IS NULL AND poisoned_at IS NULL', p.part) INTO pending;
        EXECUTE format('SELECT count(*) FROM %%s WHERE poisoned_at IS NOT NULL AND fanned_out_at IS NULL', p.part)
          INTO poisoned;
        dropped := pending = 0 AND poisoned = 0;
        IF dropped THEN
          EXECUTE format('DELETE FROM %%I.%%I x WHERE x.id IN (SELECT id FROM %%s)', %4$L, %5$L, p.part);
          EXECUTE format('DROP TABLE %%s', p.part);
        END IF;
        RETURN NEXT;
      END LOOP;
    END;
    $fn$
  $ddl$, s, n || '_drop_partitions', tbl, s, n || '_ids');

  -- the partitions of the coming week, made now
  EXECUTE format('SELECT %I.%I(7)', s, n || '_partitions_ahead');

  -- The relay makes partitions ahead; dropping them is retention's, granted like DELETE on a plain table:
  --   GRANT EXECUTE ON FUNCTION <table>_drop_partitions(timestamptz) TO outbox_relay;
  EXECUTE format('REVOKE ALL ON FUNCTION %I.%I(int) FROM PUBLIC', s, n || '_partitions_ahead');
  EXECUTE format('REVOKE ALL ON FUNCTION %I.%I(timestamptz) FROM PUBLIC', s, n || '_drop_partitions');
  EXECUTE format('GRANT EXECUTE ON FUNCTION %I.%I(int) TO outbox_relay', s, n || '_partitions_ahead');
END;
$outbox$;

DO $outbox$
DECLARE
  -- The names: psql -v table=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  replays text := format('%I.%I', s, n || '_replays');
  -- An adopted table's occurred_at column (outbox-adopt-existing.sql sets this setting).
  c_occurred text := COALESCE(NULLIF(current_setting('outbox_relay.column_occurred_at', true), ''), 'occurred_at');
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  -- One row per request. The relay walks the outbox in seq order from progress_seq (exclusive) to through_seq
  -- (the highest seq when the request was made), re-sending the fanned rows whose occurred_at is in
  -- [from_at, to_at]; progress_seq moves only once every record up to it was acknowledged. A task claims a
  -- request with a lease (lease_owner, lease_until) as it claims rows, so one task serves it at a time and
  -- another takes over when that one dies. done_at: every row was sent; cancelled_at: <table>_replay_cancel.
  EXECUTE format($ddl$
    CREATE TABLE IF NOT EXISTS %1$s (
      id            BIGSERIAL PRIMARY KEY,
      subscription  TEXT NOT NULL,
      from_at       TIMESTAMPTZ NOT NULL,
      to_at         TIMESTAMPTZ NOT NULL,
      requested_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
      through_seq   BIGINT NOT NULL,
      progress_seq  BIGINT NOT NULL,
      sent          BIGINT NOT NULL DEFAULT 0,
      done_at       TIMESTAMPTZ,
      cancelled_at  TIMESTAMPTZ,
      lease_owner   TEXT,
      lease_until   TIMESTAMPTZ,
      last_error    TEXT,
      CONSTRAINT %2$I CHECK (subscription <> ''),
      CONSTRAINT %3$I CHECK (from_at <= to_at),
      CONSTRAINT %4$I CHECK (progress_seq <= through_seq)
    )
  $ddl$, replays, n || '_replays_subscription_not_empty', n || '_replays_range_ordered',
    n || '_replays_progress_in_range');
  -- A task looks for open requests by this; it stays tiny whatever the history.
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (id) WHERE done_at IS NULL AND cancelled_at IS NULL',
    n || '_replays_open_idx', replays);
  -- Where a range starts. BRIN: a few pages for the whole table and next to nothing per insert, because
  -- occurred_at grows with seq as rows are written; it is built in one read of the table, blocking writes
  -- meanwhile (seconds for millions of rows).
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING brin (%I)', n || '_occurred_at_brin', tbl, c_occurred);

  -- Asks the relay to send the rows fanned out with occurred_at in [p_from, p_to] again, to p_subscription's
  -- topic only; returns the request's id (the records' event.replay header). Usage:
  --   SELECT events_replay('corpus.index', now() - interval '2 hours', now());
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(p_subscription TEXT, p_from TIMESTAMPTZ, p_to TIMESTAMPTZ)
    RETURNS BIGINT
    LANGUAGE plpgsql AS $fn$
    DECLARE
      fn CONSTANT text := %6$L;
      first_seq BIGINT;
      last_seq BIGINT;
      request BIGINT;
    BEGIN
      IF p_subscription IS NULL OR btrim(p_subscription) = '' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = fn || ': the subscription is empty',
          HINT = format('name one of the connector''s subscriptions: SELECT %%s(''<name>'', <from>, <to>)', fn);
      END IF;
      IF p_from IS NULL OR p_to IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '22004', MESSAGE = fn || ': from and to must not be NULL',
          HINT = 'both are occurred_at timestamps, inclusive';
      END IF;
      IF p_from > p_to THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
          MESSAGE = format('%%s: from %%s is after to %%s, so the range holds no event', fn, p_from, p_to),
          HINT = 'from and to are inclusive occurred_at timestamps, from <= to; swap them';
      END IF;
      SELECT max(seq) INTO last_seq FROM %3$s;
      SELECT min(seq) INTO first_seq FROM %3$s WHERE %5$I >= p_from AND %5$I <= p_to;
      INSERT INTO %4$s (subscription, from_at, to_at, through_seq, progress_seq)
      VALUES (p_subscription, p_from, p_to, COALESCE(last_seq, 0), COALESCE(first_seq - 1, last_seq, 0))
      RETURNING id INTO request;
      RETURN request;
    END;
    $fn$
  $ddl$, s, n || '_replay', tbl, replays, c_occurred, format('%I.%I', s, n || '_replay'));

  -- Stops a request: the relay sends none of its rows after the chunk in flight. Returns true when the
  -- request was open. Usage: SELECT events_replay_cancel(7);
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(p_id BIGINT) RETURNS BOOLEAN
    LANGUAGE plpgsql AS $fn$
    BEGIN
      UPDATE %3$s SET cancelled_at = now() WHERE id = p_id AND done_at IS NULL AND cancelled_at IS NULL;
      RETURN FOUND;
    END;
    $fn$
  $ddl$, s, n || '_replay_cancel', replays);

  -- The relay reads requests and writes their lease and progress; it never makes or deletes one.
  EXECUTE format('GRANT SELECT, UPDATE ON %s TO outbox_relay', replays);
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
  -- On the subject's hash, not the subject: a subject is any text, and a btree entry over a third of a page would
  -- fail the application's insert; the probe compares the subjects too, so two subjects of one hash stay apart.
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I (hashtext(%I::text), seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL',
    n || '_subject_pending_idx', s, n, c_subject);
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
  flag text := format('%I.%I', s, n || '_wakeup');
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  IF to_regclass(flag) IS NULL THEN
    RAISE EXCEPTION '% has no wake-up flag %', tbl, flag
      USING HINT = 'apply migration V2 (and V4) first, or re-run schemas/sql/outbox.sql';
  END IF;
  -- V2 and V4 made the function SECURITY DEFINER so that writers need no grant on the sequences; the WHEN reads
  -- the flag as the writer.
  EXECUTE format('GRANT SELECT ON SEQUENCE %s TO PUBLIC', flag);
  IF NOT has_sequence_privilege('public', flag, 'SELECT') THEN
    RAISE EXCEPTION 'every role must be able to read the wake-up flag %, and the grant to PUBLIC did not take', flag
      USING HINT = format('run the migration as the owner of %s, or have its owner GRANT SELECT ON SEQUENCE %s TO PUBLIC',
        flag, flag);
  END IF;
  -- A flag never set since it was made reads NULL; make it read 0 (nobody waits: a waiting task has set it), so
  -- that the WHEN below skips the call from the first insert on.
  EXECUTE format('SELECT setval(%L, 0, true) WHERE pg_sequence_last_value(%L) IS NULL', flag, flag);
  -- The flag is named once, here: the regclass literal becomes the sequence's OID as the trigger is made, so a
  -- search_path never changes which flag an insert reads. Not "= 1": where a writer may not read the flag,
  -- PostgreSQL 18 reads NULL, and such a writer must call the function, which reads it as its owner and clears it.
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', n || '_notify_insert', tbl);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s FOR EACH STATEMENT'
    || ' WHEN (pg_catalog.pg_sequence_last_value(%L::pg_catalog.regclass) IS DISTINCT FROM 0)'
    || ' EXECUTE FUNCTION %I.%I(%L)',
    n || '_notify_insert', tbl, flag, s, n || '_notify', ch);
END;
$outbox$;

DO $outbox$
DECLARE
  -- The names: psql -v table=... (outbox.sql), or this setting of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  clears text := format('%I.%I', s, n || '_wakeup_clears');
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  IF to_regclass(clears) IS NULL THEN
    RAISE EXCEPTION '%.% has no count of wake-up clears %', s, n, clears
      USING HINT = 'apply migration V4 first, or re-run schemas/sql/outbox.sql';
  END IF;
  EXECUTE format('GRANT SELECT, UPDATE ON SEQUENCE %s TO outbox_relay', clears);
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
  claim_index regclass;
  built regclass;
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  claim_index := to_regclass(format('%I.%I', s, n || '_unfanned_idx'));
  IF claim_index IS NOT NULL AND (SELECT indnkeyatts FROM pg_index WHERE indexrelid = claim_index) > 1 THEN
    RETURN; -- this migration ran before
  END IF;
  built := to_regclass(format('%I.%I', s, n || '_unfanned_v10_idx'));
  IF built IS NOT NULL AND NOT (SELECT indisvalid FROM pg_index WHERE indexrelid = built) THEN
    RAISE EXCEPTION 'index %.% is invalid (a CREATE INDEX CONCURRENTLY that failed or is still running)', s,
      n || '_unfanned_v10_idx'
      USING HINT = format('DROP INDEX CONCURRENTLY %I.%I; then build it again, or let this migration build it', s,
        n || '_unfanned_v10_idx');
  END IF;
  -- The same expression as the claim's share (SubjectShare): the hash moved to [0, 2^32).
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I (seq, (hashtext(%I::text)::bigint + 2147483648))'
    || ' WHERE fanned_out_at IS NULL AND poisoned_at IS NULL', n || '_unfanned_v10_idx', s, n, c_subject);
  EXECUTE format('DROP INDEX IF EXISTS %I.%I', s, n || '_unfanned_idx');
  EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', s, n || '_unfanned_v10_idx', n || '_unfanned_idx');
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
  c_type text := NULLIF(current_setting('outbox_relay.column_type', true), '');
  flag text := format('%I.%I', s, n || '_wakeup');
  clears text := format('%I.%I', s, n || '_wakeup_clears');
  wake text := format('%I.%I()', s, n || '_wake_relay');
  -- who the wake runs as: the owner of the function a re-run replaces (it keeps its owner), or the migrating role
  wake_owner oid := COALESCE((SELECT p.proowner FROM pg_proc p WHERE p.oid = to_regprocedure(wake)),
                             (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user));
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  IF to_regclass(flag) IS NULL OR to_regclass(clears) IS NULL THEN
    RAISE EXCEPTION '% has no wake-up flag % or no count of its clears %', tbl, flag, clears
      USING HINT = 'apply migrations V2 and V4 first, or re-run schemas/sql/outbox.sql';
  END IF;
  -- The wake runs as its owner: one that may not update the sequences would fail every requeue.
  IF NOT (has_sequence_privilege(wake_owner, flag, 'UPDATE') AND has_sequence_privilege(wake_owner, clears, 'UPDATE')) THEN
    RAISE EXCEPTION 'role % may not update % and %, which the wake % sets and counts', wake_owner::regrole, flag,
      clears, wake
      USING HINT = 'run the migration as the owner of the sequences (who ran V2 and V4)';
  END IF;
  IF c_type IS NULL THEN
    -- the column the bulk requeue matches now: V3 wrote it, quoted as needed, before "::text LIKE type_pattern"
    SELECT (parse_ident(substring(p.prosrc FROM '("(?:[^"]|"")+"|[^[:space:]]+)::text LIKE type_pattern')))[1] INTO c_type
      FROM pg_proc p
     WHERE p.oid = to_regprocedure(format('%I.%I(text, timestamptz, timestamptz)', s, n || '_requeue_matching'));
    c_type := COALESCE(c_type, 'type');
  END IF;
  -- PL/pgSQL checks no column as a function is made: a bulk requeue made with a column the table lacks would fail
  -- only when an operator needs it.
  IF NOT EXISTS (SELECT 1 FROM pg_attribute
                  WHERE attrelid = tbl::regclass AND attname = c_type AND attnum > 0 AND NOT attisdropped) THEN
    RAISE EXCEPTION '% has no column % for the bulk requeue to match types in', tbl, c_type
      USING HINT = 'an adopted table: SET outbox_relay.column_type to its type column first (as for V3)';
  END IF;

  -- As its owner, like the trigger (callers need no grant on the sequences), and for any role that may call it: a
  -- wake changes no row and costs one claim of each waiting task, less than what any role may cause with NOTIFY. The
  -- count moves at once, not at commit, as a writer's clear does: a task that sees it claims, and as it finds nothing
  -- and arms again it notes the transactions in progress and claims as they end (docs/wakeup.md), so a requeue must
  -- have written its rows (and so have its transaction id) before it wakes.
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      PERFORM setval(%3$L::regclass, 0, true);
      PERFORM nextval(%4$L::regclass);
      -- nested, not OR'd: an expression that names the function needs EXECUTE on it to be prepared at all
      IF NOT has_function_privilege('pg_catalog.pg_notification_queue_usage()', 'EXECUTE') THEN
        PERFORM pg_notify(%5$L, '');
      ELSIF pg_notification_queue_usage() <= 0.5 THEN
        PERFORM pg_notify(%5$L, '');
      END IF;
    END;
    $fn$
  $ddl$, s, n || '_wake_relay', flag, clears, ch);

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
      -- nested: a call of the wake is prepared only where the caller may make it (and it exists)
      IF changed THEN
        IF COALESCE(has_function_privilege(to_regprocedure(%4$L), 'EXECUTE'), false) THEN
          PERFORM %1$I.%5$I();
        ELSE
          PERFORM pg_notify(%6$L, '');
        END IF;
      END IF;
      RETURN changed;
    END;
    $fn$
  $ddl$, s, n || '_requeue', tbl, wake, n || '_wake_relay', ch);

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
        IF COALESCE(has_function_privilege(to_regprocedure(%4$L), 'EXECUTE'), false) THEN
          PERFORM %1$I.%6$I();
        ELSE
          PERFORM pg_notify(%7$L, '');
        END IF;
      END IF;
    END;
    $fn$
  $ddl$, s, n || '_requeue_matching', tbl, wake, c_type, n || '_wake_relay', ch);
END;
$outbox$;

COMMIT;
