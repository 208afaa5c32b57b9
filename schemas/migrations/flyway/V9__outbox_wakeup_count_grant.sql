-- Outbox Relay migration V9: the relay's role may count a clear of the wake-up flag (UPDATE on the sequence
-- <table>_wakeup_clears, which V4 let it only read). A writer's trigger takes the flag down and then counts the
-- clear; a writer cancelled or timed out between the two takes it down uncounted. A quiet task sees that by the
-- flag being down, until some task arms the flag again: from then on only a moved count would tell the other quiet
-- tasks, and the rows committed meanwhile in their shares waited for the sweep. With this grant a task that arms
-- the flag and finds it down counts that clear itself (docs/wakeup.md, "A clear that was never counted"). A relay
-- of any version works with it; a relay without it arms as before.
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table defaults to events; for another, set it in the migrating session first (Flyway: initSql;
-- Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events';
-- It needs V4 (the count). schemas/sql/outbox.sql runs it after V1 to V8.

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
