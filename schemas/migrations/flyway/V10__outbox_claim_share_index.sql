-- Outbox Relay migration V10: the claim's index <table>_unfanned_idx holds each row's subject hash after seq, so a
-- relay task's claim passes over the other tasks' rows in the index instead of reading each of them from the
-- table to learn its subject. A task owns a range of that hash (README, "Configuration"); with more than one relay task,
-- every claim read the other shares' rows ahead of its own: a drain on two tasks cost the database 1.4-1.9x the
-- work a row of one task, and about 4x while the other share waited unclaimed (bench/TUNING.md). A relay of any
-- version works with either index; the relay from this version on claims through it.
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table defaults to events; for another, set this in the migrating session first (Flyway:
-- initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events';
-- An adopted table (outbox-adopt-existing.sql) hashes its subject column: outbox_relay.column_subject.
-- CREATE INDEX blocks inserts while it reads the table: on a large live plain table, first run by hand
--   CREATE INDEX CONCURRENTLY events_unfanned_v10_idx ON events (seq, (hashtext(subject::text)::bigint + 2147483648))
--     WHERE fanned_out_at IS NULL AND poisoned_at IS NULL;
-- and this migration then finds it (refusing it while it is invalid), drops the old index and gives the new one its
-- name. The DROP takes an exclusive lock on the table for a moment: on a busy outbox set lock_timeout and retry.
-- A partitioned outbox cannot build an index CONCURRENTLY on its parent: build the parent's with CREATE INDEX ON
-- ONLY, one CONCURRENTLY on each partition, and ALTER INDEX ... ATTACH PARTITION each (docs/upgrading.md). It needs V1.
-- schemas/sql/outbox.sql runs it after V1 to V9.

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
