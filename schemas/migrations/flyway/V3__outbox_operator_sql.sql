-- Outbox Relay migration V3: the operators' views <table>_pending and <table>_poisoned, and the bulk
-- requeue <table>_requeue_matching (README "Runbook").
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table and channel default to events and outbox_events; for others, set these in the
-- migrating session first (Flyway: initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events'; SET outbox_relay.notify_channel = 'app_outbox';
-- schemas/sql/outbox.sql runs V1, V2, V3 in one go. README "Upgrading" says which to apply when.
-- On a table adopted with schemas/sql/outbox-adopt-existing.sql (Debezium's, for instance) the views and
-- the bulk requeue read the event's columns from outbox_relay.column_id, column_type, column_subject and
-- column_occurred_at, which that script sets; unset, they are outbox.sql's id, type, subject, occurred_at.

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
