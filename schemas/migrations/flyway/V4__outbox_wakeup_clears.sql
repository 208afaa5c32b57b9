-- Outbox Relay migration V4: the count <table>_wakeup_clears of the wake-up flag's clears, and the trigger
-- function that keeps it, leaves the NOTIFY out while PostgreSQL's NOTIFY queue is over half full, and
-- names the flag once, here, instead of looking it up on every insert (docs/wakeup.md).
-- A relay of any version works with it: an older relay never reads the count. A relay of this version on a
-- table without V4 still wakes, but cannot tell every clear of the flag (docs/wakeup.md, "Older tables").
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table and channel default to events and outbox_events; for others, set these in the
-- migrating session first (Flyway: initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events'; SET outbox_relay.notify_channel = 'app_outbox';
-- schemas/sql/outbox.sql runs V1 to V4 in one go. README "Upgrading" says which to apply when.

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
