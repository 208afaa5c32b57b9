-- Outbox Relay migration V8: the trigger <table>_notify_insert calls its function only while the wake-up flag
-- is not 0. While every task is busy (the flag reads 0, as it does at any steady rate) an insert pays one read of
-- the flag in the trigger's WHEN, not a PL/pgSQL call: the call cost PostgreSQL some 10 % of a one-row commit's
-- CPU (docs/wakeup.md, "What a writer pays"). The function, the flag and the NOTIFY are as V4 left them; a relay
-- of any version works with it.
-- The WHEN runs as the inserting role, so every role may read the flag (SELECT to PUBLIC: it holds 0 or 1 and
-- tells nothing; a re-run grants it again, and the migration fails if the grant did not take). Do not revoke it:
-- on PostgreSQL 13-17 a writer that may not read the flag fails its inserts ("permission denied for sequence
-- <table>_wakeup"); on 18 its WHEN reads NULL and it pays the function's call, as before V8.
-- DROP and CREATE TRIGGER wait for the writers' open transactions and hold up the inserts behind them for as
-- long: on a busy outbox, SET lock_timeout in the migrating session and retry.
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table and channel default to events and outbox_events; for others, set these in the
-- migrating session first (Flyway: initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events'; SET outbox_relay.notify_channel = 'app_outbox';
-- It needs V2 (the flag) and V4 (the function). schemas/sql/outbox.sql runs it after V1 to V7.

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
