-- Outbox Relay migration V6: replay to one subscription (docs/replay.md). <table>_replays holds the requests,
-- <table>_replay(subscription, from, to) makes one and returns its id, <table>_replay_cancel(id) stops one, and
-- a BRIN index on occurred_at lets a request find where its range starts without reading the whole table.
-- Self-contained: it needs only the outbox table of V1. A relay of an older version never reads the requests;
-- a relay of this version on a table without V6 says once that replay is off and relays as before.
-- Apply with Flyway or Liquibase (schemas/migrations/liquibase/outbox-changelog.xml), or by hand in
-- order. The table defaults to events; for another, set this in the migrating session first (Flyway:
-- initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events';
-- schemas/sql/outbox.sql runs every migration in one go. README "Upgrading" says which to apply when.

DO $outbox$
DECLARE
  -- The names: psql -v table=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  replays text := format('%I.%I', s, n || '_replays');
  -- An adopted table's occurred_at column (outbox-adopt-existing.sql sets this setting).
  c_occurred text := COALESCE(NULLIF(current_setting('outbox_relay.column_occurred_at', true), ''), 'occurred_at');
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  -- One row per request. The relay walks the outbox in seq order from progress_seq (exclusive) to through_seq
  -- (the highest seq when the request was made), re-sending the fanned rows whose occurred_at is in
  -- [from_at, to_at]; progress_seq moves only once every record up to it was acknowledged. A task claims a
  -- request with a lease (lease_owner, lease_until) as it claims rows, so one task serves it at a time and
  -- another takes over when that one dies. done_at: every row was sent; cancelled_at: <table>_replay_cancel.
  EXECUTE format($ddl$
    CREATE TABLE IF NOT EXISTS %1$s (
      id            BIGSERIAL PRIMARY KEY,
      subscription  TEXT NOT NULL,
      from_at       TIMESTAMPTZ NOT NULL,
      to_at         TIMESTAMPTZ NOT NULL,
      requested_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
      through_seq   BIGINT NOT NULL,
      progress_seq  BIGINT NOT NULL,
      sent          BIGINT NOT NULL DEFAULT 0,
      done_at       TIMESTAMPTZ,
      cancelled_at  TIMESTAMPTZ,
      lease_owner   TEXT,
      lease_until   TIMESTAMPTZ,
      last_error    TEXT,
      CONSTRAINT %2$I CHECK (subscription <> ''),
      CONSTRAINT %3$I CHECK (from_at <= to_at),
      CONSTRAINT %4$I CHECK (progress_seq <= through_seq)
    )
  $ddl$, replays, n || '_replays_subscription_not_empty', n || '_replays_range_ordered',
    n || '_replays_progress_in_range');
  -- A task looks for open requests by this; it stays tiny whatever the history.
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (id) WHERE done_at IS NULL AND cancelled_at IS NULL',
    n || '_replays_open_idx', replays);
  -- Where a range starts. BRIN: a few pages for the whole table and next to nothing per insert, because
  -- occurred_at grows with seq as rows are written; it is built in one read of the table, blocking writes
  -- meanwhile (seconds for millions of rows).
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING brin (%I)', n || '_occurred_at_brin', tbl, c_occurred);

  -- Asks the relay to send the rows fanned out with occurred_at in [p_from, p_to] again, to p_subscription's
  -- topic only; returns the request's id (the records' event.replay header). Usage:
  --   SELECT events_replay('corpus.index', now() - interval '2 hours', now());
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(p_subscription TEXT, p_from TIMESTAMPTZ, p_to TIMESTAMPTZ)
    RETURNS BIGINT
    LANGUAGE plpgsql AS $fn$
    DECLARE
      fn CONSTANT text := %6$L;
      first_seq BIGINT;
      last_seq BIGINT;
      request BIGINT;
    BEGIN
      IF p_subscription IS NULL OR btrim(p_subscription) = '' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = fn || ': the subscription is empty',
          HINT = format('name one of the connector''s subscriptions: SELECT %%s(''<name>'', <from>, <to>)', fn);
      END IF;
      IF p_from IS NULL OR p_to IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '22004', MESSAGE = fn || ': from and to must not be NULL',
          HINT = 'both are occurred_at timestamps, inclusive';
      END IF;
      IF p_from > p_to THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
          MESSAGE = format('%%s: from %%s is after to %%s, so the range holds no event', fn, p_from, p_to),
          HINT = 'from and to are inclusive occurred_at timestamps, from <= to; swap them';
      END IF;
      SELECT max(seq) INTO last_seq FROM %3$s;
      SELECT min(seq) INTO first_seq FROM %3$s WHERE %5$I >= p_from AND %5$I <= p_to;
      INSERT INTO %4$s (subscription, from_at, to_at, through_seq, progress_seq)
      VALUES (p_subscription, p_from, p_to, COALESCE(last_seq, 0), COALESCE(first_seq - 1, last_seq, 0))
      RETURNING id INTO request;
      RETURN request;
    END;
    $fn$
  $ddl$, s, n || '_replay', tbl, replays, c_occurred, format('%I.%I', s, n || '_replay'));

  -- Stops a request: the relay sends none of its rows after the chunk in flight. Returns true when the
  -- request was open. Usage: SELECT events_replay_cancel(7);
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(p_id BIGINT) RETURNS BOOLEAN
    LANGUAGE plpgsql AS $fn$
    BEGIN
      UPDATE %3$s SET cancelled_at = now() WHERE id = p_id AND done_at IS NULL AND cancelled_at IS NULL;
      RETURN FOUND;
    END;
    $fn$
  $ddl$, s, n || '_replay_cancel', replays);

  -- The relay reads requests and writes their lease and progress; it never makes or deletes one.
  EXECUTE format('GRANT SELECT, UPDATE ON %s TO outbox_relay', replays);
END;
$outbox$;
