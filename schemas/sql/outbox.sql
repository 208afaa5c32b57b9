-- Outbox table for the Outbox Relay connector (io.outboxrelay.connector.OutboxSourceConnector).
-- Apply once per database: psql -v ON_ERROR_STOP=1 -f schemas/sql/outbox.sql
-- Safe to re-run: every object is created only when missing.
--
-- Row lifecycle (docs/row-lifecycle.md):
--   pending  (fanned_out_at NULL, poisoned_at NULL, lease free)
--   leased   (lease_owner/lease_until set by a claim; attempts + 1)
--   fanned   (fanned_out_at + fanout set after every subscriber record was acknowledged)
--   poisoned (poisoned_at + last_error; left out of every claim until events_requeue(seq))

CREATE TABLE IF NOT EXISTS events (
  seq             BIGSERIAL PRIMARY KEY,
  id              UUID NOT NULL DEFAULT gen_random_uuid(),
  type            TEXT NOT NULL,
  subject         TEXT NOT NULL,
  payload         JSONB NOT NULL DEFAULT '{}',
  headers         JSONB,
  occurred_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  fanned_out_at   TIMESTAMPTZ,
  fanout          JSONB,
  attempts        INT NOT NULL DEFAULT 0,
  next_attempt_at TIMESTAMPTZ,
  last_error      TEXT,
  poisoned_at     TIMESTAMPTZ,
  lease_owner     TEXT,
  lease_until     TIMESTAMPTZ,
  CONSTRAINT events_id_key UNIQUE (id),
  CONSTRAINT events_subject_not_empty CHECK (subject <> ''),
  CONSTRAINT events_type_not_empty CHECK (type <> ''),
  CONSTRAINT events_attempts_not_negative CHECK (attempts >= 0)
)
-- Free space in each page lets the claim's lease UPDATE stay HOT (it changes no indexed column),
-- which measured 1.4-1.6x faster claims; the table stays small when retention is on.
WITH (fillfactor = 50,
      autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_insert_scale_factor = 0.05,
      autovacuum_analyze_scale_factor = 0.02);

-- The claim reads exactly this predicate in seq order.
CREATE INDEX IF NOT EXISTS events_unfanned_idx
  ON events (seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL;

-- Operators look poisoned rows up by this; small because poisoned rows are rare.
CREATE INDEX IF NOT EXISTS events_poisoned_idx
  ON events (seq) WHERE poisoned_at IS NOT NULL;

-- The wake-up flag: 1 while a relay task waits for a NOTIFY, 0 while every task is busy. A sequence,
-- because sequences are not transactional: a writer reads the flag as it is at that moment, whatever its
-- transaction's snapshot, and sees a task's arming at once. The trigger below NOTIFYs only while the flag
-- is 1, and clears it: PostgreSQL orders notifying commits with one database-wide lock held through the
-- commit's flush, so a NOTIFY per commit would serialize the application's durable commits; a busy
-- relay costs writers no NOTIFY at all. How a task arms it without missing a row: README "Wake-up".
CREATE SEQUENCE IF NOT EXISTS events_wakeup AS smallint MINVALUE 0 MAXVALUE 1 START WITH 0 NO CYCLE;

-- One statement-level trigger per inserting statement. It runs as its owner (writers need no grant on
-- the flag) with a fixed search_path, and finds the flag next to the table it fires on, so one function
-- serves outbox tables in any schema. A table without its flag (made by an older outbox.sql) gets a
-- NOTIFY on every insert, as before.
CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  flag regclass := to_regclass(format('%I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_wakeup'));
BEGIN
  IF flag IS NULL THEN
    PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
  ELSIF pg_sequence_last_value(flag) = 1 THEN
    PERFORM setval(flag, 0, true);
    PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
  END IF;
  RETURN NULL;
END;
$fn$;

DROP TRIGGER IF EXISTS events_notify_insert ON events;
CREATE TRIGGER events_notify_insert
  AFTER INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify('outbox_events');

-- Put a poisoned row back in line. Returns true when the row was poisoned and is now pending.
-- Usage: SELECT events_requeue(42);
CREATE OR REPLACE FUNCTION events_requeue(p_seq BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $fn$
DECLARE
  changed BOOLEAN;
BEGIN
  UPDATE events
     SET poisoned_at = NULL, attempts = 0, last_error = NULL, next_attempt_at = NULL,
         lease_owner = NULL, lease_until = NULL
   WHERE seq = p_seq AND poisoned_at IS NOT NULL AND fanned_out_at IS NULL;
  changed := FOUND;
  IF changed THEN
    PERFORM pg_notify('outbox_events', '');
  END IF;
  RETURN changed;
END;
$fn$;

-- Least privilege: the connector needs SELECT and UPDATE on the outbox and on its wake-up flag (LISTEN
-- and NOTIFY need no grant). Create a login role in this group, e.g.
--   CREATE ROLE relay LOGIN PASSWORD '...' IN ROLE outbox_relay;
-- With outbox.retention.ms set, also: GRANT DELETE ON events TO outbox_relay;
DO $do$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_relay') THEN
    CREATE ROLE outbox_relay NOLOGIN;
  END IF;
END;
$do$;
GRANT SELECT, UPDATE ON events TO outbox_relay;
GRANT SELECT, UPDATE ON SEQUENCE events_wakeup TO outbox_relay;
