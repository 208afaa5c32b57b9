-- Chat tables read by the mention-recovery companion task (io.outboxrelay.mentions.MentionRecoveryTask,
-- enabled with mentions.enabled=true). Table, column and index names are part of its contract.
-- Apply once per database: psql -v ON_ERROR_STOP=1 -f schemas/sql/mentions.sql
-- Safe to re-run: every object is created only when missing.
-- A database whose messages table predates the marker column: apply
-- mentions-add-marker-migration.sql FIRST (it seeds existing rows as routed), then this file.
--
-- Message lifecycle, as far as mentions go:
--   unrouted (mentions_routed_at NULL)  -> the server's live pass, or the recovery scan, routes it
--   routed   (mentions_routed_at = unix ms when the pass completed; never cleared)
-- A message listed in held_messages under a live session belongs to the server's live path and is
-- skipped by the scan until that session ends or goes stale.
-- Times are unix milliseconds (BIGINT), as in the server's schema.

CREATE TABLE IF NOT EXISTS accounts (
  id              TEXT NOT NULL,
  handle          TEXT NOT NULL,
  kind            TEXT,
  home_channel_id TEXT,
  CONSTRAINT accounts_pkey PRIMARY KEY (id),
  CONSTRAINT accounts_handle_key UNIQUE (handle),
  CONSTRAINT accounts_kind_known CHECK (kind IN ('human', 'agent')),
  CONSTRAINT accounts_handle_not_empty CHECK (handle <> '')
);

CREATE TABLE IF NOT EXISTS channels (
  id                     TEXT NOT NULL,
  name                   TEXT,
  mandatory_subscription BOOLEAN NOT NULL DEFAULT false,
  CONSTRAINT channels_pkey PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS topics (
  id         TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  CONSTRAINT topics_pkey PRIMARY KEY (id),
  CONSTRAINT topics_channel_id_fkey FOREIGN KEY (channel_id) REFERENCES channels (id)
);

CREATE TABLE IF NOT EXISTS channel_members (
  channel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  subscribed BOOLEAN NOT NULL DEFAULT true,
  CONSTRAINT channel_members_pkey PRIMARY KEY (channel_id, account_id)
);

CREATE TABLE IF NOT EXISTS messages (
  id                 TEXT NOT NULL,
  seq                BIGSERIAL,
  topic_id           TEXT NOT NULL,
  author_id          TEXT NOT NULL,
  blocks             JSONB NOT NULL,
  at_unix_ms         BIGINT NOT NULL,
  mentions_routed_at BIGINT,  -- unix ms; NULL = the mention pass never completed for this row
  CONSTRAINT messages_pkey PRIMARY KEY (id),
  CONSTRAINT messages_seq_key UNIQUE (seq),
  CONSTRAINT messages_topic_id_fkey FOREIGN KEY (topic_id) REFERENCES topics (id)
);

-- The recovery scan reads exactly this predicate in seq order; in steady state nearly every row is
-- marked, so the index holds only the thin unrouted set.
CREATE INDEX IF NOT EXISTS messages_mentions_unrouted_idx
  ON messages (seq) WHERE mentions_routed_at IS NULL;

CREATE TABLE IF NOT EXISTS agent_sessions (
  id                 TEXT NOT NULL,
  account_id         TEXT NOT NULL,
  started_at_unix_ms BIGINT NOT NULL,
  last_seen_unix_ms  BIGINT NOT NULL,
  ended_at_unix_ms   BIGINT,
  CONSTRAINT agent_sessions_pkey PRIMARY KEY (id)
);

-- "Does this agent have a live session" looks up open sessions by account.
CREATE INDEX IF NOT EXISTS agent_sessions_open_account_idx
  ON agent_sessions (account_id, last_seen_unix_ms) WHERE ended_at_unix_ms IS NULL;

CREATE TABLE IF NOT EXISTS held_messages (
  message_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  CONSTRAINT held_messages_pkey PRIMARY KEY (message_id),
  CONSTRAINT held_messages_message_id_fkey FOREIGN KEY (message_id) REFERENCES messages (id)
);

CREATE TABLE IF NOT EXISTS owed_mentions (
  agent_account_id    TEXT NOT NULL,
  message_id          TEXT NOT NULL,
  recorded_at_unix_ms BIGINT NOT NULL,
  CONSTRAINT owed_mentions_pkey PRIMARY KEY (agent_account_id, message_id)
);

-- Least privilege for the connector role: read the chat tables, set only the marker column, add
-- owed rows (INSERT ... ON CONFLICT DO NOTHING needs no UPDATE). LISTEN needs no grant; no sequence
-- is used by the task. Create a login role in this group, e.g.
--   CREATE ROLE relay LOGIN PASSWORD '...' IN ROLE outbox_relay;
DO $do$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_relay') THEN
    CREATE ROLE outbox_relay NOLOGIN;
  END IF;
END;
$do$;
GRANT SELECT ON accounts, channels, topics, channel_members, messages, agent_sessions, held_messages
  TO outbox_relay;
GRANT UPDATE (mentions_routed_at) ON messages TO outbox_relay;
GRANT INSERT ON owed_mentions TO outbox_relay;
