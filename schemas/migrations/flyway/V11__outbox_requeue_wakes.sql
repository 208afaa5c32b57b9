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
-- The bulk requeue keeps matching the type column it matched (an adopted table's, outbox-adopt-existing.sql), unless
-- outbox_relay.column_type names another. Any role may wake the relay, as any role may NOTIFY; where a hardening
-- script takes EXECUTE on new functions from PUBLIC, a requeue by a role without it NOTIFYs alone, as before V11:
-- GRANT EXECUTE ON FUNCTION events_wake_relay() TO the operators. It needs V1 and V3 (the requeue functions), V2
-- (the flag) and V4 (the count), and is made by a role that may update both sequences (their owner).
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
