-- Outbox Relay migration V7: the index <table>_subject_pending_idx on (hashtext(subject), seq) of the rows still pending,
-- which outbox.ordering=strict reads to claim a row only when no earlier row of its subject is pending
-- (docs/ordering.md). The relay's validation refuses outbox.ordering=strict on a table without it; with the
-- default ordering the relay never reads it. It costs a writer one index entry per insert (the stamp, already
-- not a HOT update, removes the row from it; the claim's lease update stays HOT).
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table defaults to events; for another, set this in the migrating session first (Flyway:
-- initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events';
-- An adopted table (outbox-adopt-existing.sql) indexes its subject column: outbox_relay.column_subject.
-- CREATE INDEX blocks inserts while it reads the table: on a large live table, first run by hand
--   CREATE INDEX CONCURRENTLY events_subject_pending_idx ON events (hashtext(subject::text), seq)
--     WHERE fanned_out_at IS NULL AND poisoned_at IS NULL;
-- and this migration then finds it. schemas/sql/outbox.sql runs it after V1 to V6.

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
