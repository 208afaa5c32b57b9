-- Outbox Relay migration V2: the wake-up flag <table>_wakeup, and the trigger function that NOTIFYs only
-- while a relay task waits (it clears the flag). Apply after the workers run a plugin that arms the flag:
-- an older relay never arms it and would wait for its sweep.
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table and channel default to events and outbox_events; for others, set these in the
-- migrating session first (Flyway: initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events'; SET outbox_relay.notify_channel = 'app_outbox';
-- schemas/sql/outbox.sql runs V1, V2, V3 in one go. README "Upgrading" says which to apply when.

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
