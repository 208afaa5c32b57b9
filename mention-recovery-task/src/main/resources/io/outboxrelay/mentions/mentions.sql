-- Statements of the mention-recovery task (io.outboxrelay.mentions.JdbcMentionStore), one per
-- "-- name:" line. Tables: schemas/sql/mentions.sql. Parameters are positional; each statement lists
-- them in order. Times are unix milliseconds.

-- name: ReadUnroutedBatch
-- 1 scanLocalFloor: seq floor local to one pass (0 at its start, the last seq read after each batch)
-- 2 cutoff: at_unix_ms must be below it (now - mentions.min.age.ms for periodic passes, else max):
--   messages strictly older than the minimum age
-- 3 liveSince: a session seen at or after this (and not ended) is live
-- 4 batch: mentions.batch.size
-- A message held by a live session belongs to the server's live path and is skipped (it stays NULL);
-- held by an ended or stale session, it is scannable.
SELECT m.id, m.seq, m.author_id, m.blocks::text AS blocks, t.channel_id, c.mandatory_subscription
  FROM messages m
  JOIN topics t ON t.id = m.topic_id
  JOIN channels c ON c.id = t.channel_id
 WHERE m.mentions_routed_at IS NULL
   AND m.seq > ?
   AND m.at_unix_ms < ?
   AND NOT EXISTS (
         SELECT 1
           FROM held_messages h
           JOIN agent_sessions s ON s.id = h.session_id
          WHERE h.message_id = m.id
            AND s.ended_at_unix_ms IS NULL
            AND s.last_seen_unix_ms >= ?)
 ORDER BY m.seq
 LIMIT ?

-- name: LoadAgentMembers
-- 1 liveSince, 2 channel ids (text[]): the agent members of every channel of one batch, one query
SELECT cm.channel_id, a.id AS account_id, a.handle, cm.subscribed, a.home_channel_id,
       EXISTS (
         SELECT 1
           FROM agent_sessions s
          WHERE s.account_id = a.id
            AND s.ended_at_unix_ms IS NULL
            AND s.last_seen_unix_ms >= ?) AS live
  FROM channel_members cm
  JOIN accounts a ON a.id = cm.account_id
 WHERE cm.channel_id = ANY (?::text[])
   AND a.kind = 'agent'
 ORDER BY cm.channel_id, a.handle

-- name: RecordOwedMentions
-- 1 recordedAt, 2 agent account ids (text[]), 3 message ids (text[]); idempotent on the primary key.
-- No conflict target: naming one would need SELECT on owed_mentions, and the key is its only unique
-- constraint, so the effect is the same with INSERT alone.
INSERT INTO owed_mentions (agent_account_id, message_id, recorded_at_unix_ms)
SELECT u.agent_account_id, u.message_id, ?
  FROM unnest(?::text[], ?::text[]) AS u(agent_account_id, message_id)
    ON CONFLICT DO NOTHING

-- name: MarkMentionsRouted
-- 1 routedAt, 2 message ids (text[]); guarded: a message the server marked first keeps its marker
UPDATE messages m
   SET mentions_routed_at = ?
  FROM unnest(?::text[]) AS u(id)
 WHERE m.id = u.id
   AND m.mentions_routed_at IS NULL

-- name: MarkNamedMentionsRouted
-- 1 routedAt, 2 seqs (bigint[]), 3 message ids (text[]): at the task's start, the messages its committed
-- source offset names (their records are in Kafka; docs/exactly-once.md, 3.12). The (seq, id) pair guards
-- against a messages table created again since the offset was written; guarded like MarkMentionsRouted.
UPDATE messages m
   SET mentions_routed_at = ?
  FROM unnest(?::bigint[], ?::text[]) AS u(seq, id)
 WHERE m.seq = u.seq
   AND m.id = u.id
   AND m.mentions_routed_at IS NULL
