-- Outbox Relay migration V11: a requeue wakes the relay the way a writer's insert does. <table>_requeue(seq) and
-- <table>_requeue_matching(...) woke it with a NOTIFY alone: a waiting task whose NOTIFY was lost (its LISTEN session
-- dead and not yet noticed) found the requeued rows only at its sweep (outbox.sweep.interval.ms, a minute by default).
-- Both now call <table>_wake_relay(), which takes the wake-up flag down and counts the clear, as the insert trigger
-- does, so every waiting task claims at its next look whether or not a NOTIFY reaches it, and which NOTIFYs unless
-- PostgreSQL's NOTIFY queue is over half full (a NOTIFY that finds it full would fail the requeue; the count tells the
-- relay instead). Operators may call it alone after changing rows by hand: SELECT events_wake_relay();
-- A relay of any version works with it.
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table and channel default to events and outbox_events; for others, set these in the
-- migrating session first (Flyway: initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events'; SET outbox_relay.notify_channel = 'app_outbox';
-- An adopted table (outbox-adopt-existing.sql) matches its type column in the bulk requeue: outbox_relay.column_type,
-- as for V3. It needs V1 and V3 (the requeue functions), V2 (the flag) and V4 (the count).
-- schemas/sql/outbox.sql runs it after V1 to V10.

DO $outbox$
DECLARE
  -- The names: psql -v table=... -v channel=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  ch text := COALESCE(NULLIF(current_setting('outbox_relay.notify_channel', true), ''), 'outbox_events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  c_type text := COALESCE(NULLIF(current_setting('outbox_relay.column_type', true), ''), 'type');
  flag text := format('%I.%I', s, n || '_wakeup');
  clears text := format('%I.%I', s, n || '_wakeup_clears');
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  IF to_regclass(flag) IS NULL OR to_regclass(clears) IS NULL THEN
    RAISE EXCEPTION '% has no wake-up flag % or no count of its clears %', tbl, flag, clears
      USING HINT = 'apply migrations V2 and V4 first, or re-run schemas/sql/outbox.sql';
  END IF;
  -- PL/pgSQL checks no column as a function is made: a bulk requeue made with a column the table lacks would fail
  -- only when an operator needs it.
  IF NOT EXISTS (SELECT 1 FROM pg_attribute
                  WHERE attrelid = tbl::regclass AND attname = c_type AND attnum > 0 AND NOT attisdropped) THEN
    RAISE EXCEPTION '% has no column % for the bulk requeue to match types in', tbl, c_type
      USING HINT = 'an adopted table: SET outbox_relay.column_type to its type column first (as for V3)';
  END IF;

  -- As its owner, like the trigger (callers need no grant on the sequences), and for any role that may call it: a
  -- wake changes no row and costs one claim of each waiting task, what any insert may cost. The count moves at once,
  -- not at commit: a task that sees it claims noting the transactions in progress and claims again as they end
  -- (docs/wakeup.md), so a requeue must have written its rows (and so have its transaction id) before it wakes.
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
      IF changed THEN
        PERFORM %1$I.%4$I();
      END IF;
      RETURN changed;
    END;
    $fn$
  $ddl$, s, n || '_requeue', tbl, n || '_wake_relay');

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
        PERFORM %1$I.%4$I();
      END IF;
    END;
    $fn$
  $ddl$, s, n || '_requeue_matching', tbl, n || '_wake_relay', c_type);
END;
$outbox$;
