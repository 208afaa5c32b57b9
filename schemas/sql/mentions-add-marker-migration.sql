-- Adds the mention-recovery marker to a messages table that predates it.
-- Apply once, BEFORE mentions.sql, on a database whose messages table has no mentions_routed_at:
--   psql -v ON_ERROR_STOP=1 -f schemas/sql/mentions-add-marker-migration.sql
-- (psql sends one statement at a time; the index build below cannot run inside a transaction.)
-- Safe to re-run: the column is added only when missing and the index only when absent.
--
-- Seed forward, no backfill: every row that exists now gets a non-NULL marker (the migration time,
-- unix ms), so the first recovery scan does not replay history. Rows inserted afterwards start NULL
-- and are marked by the server's live pass or recovered by the scan.
--
-- ADD COLUMN with a non-volatile default stores the default in the catalog and rewrites nothing;
-- dropping the default in the same transaction means no row inserted after this commit can pick it
-- up (concurrent inserts wait for the ALTER's lock, then see the column without a default).

BEGIN;
ALTER TABLE messages
  ADD COLUMN IF NOT EXISTS mentions_routed_at BIGINT
  DEFAULT (floor(extract(epoch FROM now()) * 1000))::bigint;
ALTER TABLE messages ALTER COLUMN mentions_routed_at DROP DEFAULT;
COMMENT ON COLUMN messages.mentions_routed_at IS
  'unix ms when the mention pass completed; NULL = never completed (scanned by mention recovery)';
COMMIT;

-- Right after the migration the index is empty (every row is marked); CONCURRENTLY keeps writers
-- running while the table is scanned once. If a concurrent build fails it leaves an INVALID index:
-- DROP INDEX CONCURRENTLY messages_mentions_unrouted_idx; and re-run this file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_mentions_unrouted_idx
  ON messages (seq) WHERE mentions_routed_at IS NULL;

-- The marker is the one column the connector role may update (mentions.sql grants the rest).
DO $do$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_relay') THEN
    GRANT UPDATE (mentions_routed_at) ON messages TO outbox_relay;
  END IF;
END;
$do$;
