-- Statements of the mention-recovery task (io.outboxrelay.mentions.JdbcMentionStore), one per
-- "-- name:" line. Tables: schemas/sql/mentions.sql. Parameters are positional; each statement lists
-- them in order. Times are unix milliseconds.

-- name: ReadUnroutedBatch
-- 1 scanLocalFloor: seq floor local to one pass (the lowest bigint at its start, the last seq read after each batch)
-- 2 newest: at_unix_ms must be at most it (now - mentions.min.age.ms - 1 for periodic passes: messages strictly
--   older than the minimum age; else the highest bigint, every message)
-- 3 liveSince: a session seen at or after this (and not ended) is live
-- 4 batch: how many messages to read (mentions.batch.size, less after a batch cut short)
-- 5 blocksBudget: the bytes of blocks a batch brings at most (mentions' JdbcMentionStore: 16 MiB): a message that
--   would take the batch's past it comes deferred, without its blocks, and the task reads it again with the next
--   batch; the first message always comes whole (up to 7). Here it bounds which messages are turned into
--   text at all: those whose blocks, as stored (pg_column_size: compressed, read without fetching them from
--   TOAST), keep the batch's within it, or while every message so far is stored in 8 kB or less (cheap, and such
--   a text can be longer or shorter than its jsonb). 200 deferred messages of 50 MB each were otherwise converted
--   on every read, past the statement timeout. The bound is on compressed bytes, so blocks that compress well may
--   still be converted, then deferred (no SQL function gives a jsonb's uncompressed size without reading it); hence
--   also at most 16 messages stored in more than 8 kB are converted a read: 60 deferred messages of 8 MB of one
--   repeated line (stored in some 50 kB each) were otherwise all converted at every read.
-- 6 maxMessageBytes: blocks longer than this as text are never sent, not even as a batch's first message (which
--   comes whole otherwise): their size alone comes (blocks_bytes), and the task leaves the message unrouted as a
--   fault instead of filling the worker's heap with it at every pass. Such blocks count for nothing in the budget.
-- 7 blocksBudget again: the same bound on the texts' bytes, which decides what is sent (w.within).
-- 8 maxMessageBytes again, for what is sent.
-- A message held by a live session belongs to the server's live path and is skipped (it stays NULL);
-- held by an ended or stale session, it is scannable.
-- In SQL_ASCII and single-byte databases (x.raw, the encoding's name) the texts come as the hex of their bytes:
-- the server refuses to send a text with a byte that is no character there, and one such message would fail
-- every batch (io.outboxrelay.common.DatabaseText decodes them, and a message it cannot read is left unrouted).
WITH x AS (SELECT {raw_encoding} AS raw),
b AS (SELECT m.id, m.seq, m.author_id, m.blocks AS doc, pg_column_size(m.blocks) AS stored, t.channel_id,
             c.mandatory_subscription
        FROM messages m
        JOIN topics t ON t.id = m.topic_id
        JOIN channels c ON c.id = t.channel_id
       WHERE m.mentions_routed_at IS NULL
         AND m.seq > ?
         AND m.at_unix_ms <= ?
         AND NOT EXISTS (
               SELECT 1
                 FROM held_messages h
                 JOIN agent_sessions s ON s.id = h.session_id
                WHERE h.message_id = m.id
                  AND s.ended_at_unix_ms IS NULL
                  AND s.last_seen_unix_ms >= ?)
       ORDER BY m.seq
       LIMIT ?),
c AS (SELECT b.*, b.seq = min(b.seq) OVER () AS first,
             bool_and(COALESCE(b.stored, 0) <= 8192) OVER (ORDER BY b.seq ROWS UNBOUNDED PRECEDING)
               OR COALESCE(sum(b.stored) OVER (ORDER BY b.seq ROWS UNBOUNDED PRECEDING), 0) <= ?
                  AND count(*) FILTER (WHERE b.stored > 8192) OVER (ORDER BY b.seq ROWS UNBOUNDED PRECEDING) <= 16
               AS may_fit
        FROM b),
-- materialized: inlined, the cast was computed once for the window's sum and again for the output
t AS MATERIALIZED (SELECT c.*, CASE WHEN c.may_fit OR c.first THEN c.doc::text END AS blocks
        FROM c),
w AS (SELECT t.*, t.first
               OR t.may_fit AND COALESCE(sum(octet_length(t.blocks)) FILTER (WHERE octet_length(t.blocks) <= ?)
                                       OVER (ORDER BY t.seq ROWS UNBOUNDED PRECEDING), 0) <= ? AS within
        FROM t)
SELECT {sent(w.id)} AS id,
       w.seq,
       {sent(w.author_id)} AS author_id,
       CASE WHEN w.within AND octet_length(w.blocks) <= ? THEN {sent(w.blocks)} END AS blocks,
       {sent(w.channel_id)} AS channel_id,
       w.mandatory_subscription, NOT w.within AS deferred, CASE WHEN w.within THEN octet_length(w.blocks) END AS blocks_bytes,
       x.raw
  FROM x, w
 ORDER BY w.seq

-- name: LoadAgentMembers
-- The agent members a batch's routing can reach (io.outboxrelay.mentions.WantedMembers), one query: every agent
-- member of the channels whose messages ping them all, and of the other channels those whose handle, its ASCII
-- letters lower-cased, is one the channel's messages mention. A handle with a character outside the grammar's
-- [A-Za-z0-9_.-] comes whatever the mentions (the policy lower-cases with Unicode's rules, and a text the task
-- cannot read must reach it as such). A channel of 10,000 agents whose messages mention one brings one row.
-- 1 channel ids, 2 handles (text[], pairwise: a channel and a handle mentioned there, lower-cased)
-- 3 liveSince
-- 4 every channel id of 1 and 5 (text[]): the index's key, so that only those channels' rows are read
-- 5 channel ids whose every agent member is wanted (text[])
-- Texts as ReadUnroutedBatch sends them (x.raw).
WITH x AS (SELECT {raw_encoding} AS raw),
wanted AS (SELECT DISTINCT u.channel_id, u.handle FROM unnest(?::text[], ?::text[]) AS u(channel_id, handle))
SELECT {sent(cm.channel_id)} AS channel_id,
       {sent(a.id)} AS account_id,
       {sent(a.handle)} AS handle,
       cm.subscribed,
       {sent(a.home_channel_id)}
         AS home_channel_id,
       EXISTS (
         SELECT 1
           FROM agent_sessions s
          WHERE s.account_id = a.id
            AND s.ended_at_unix_ms IS NULL
            AND s.last_seen_unix_ms >= ?) AS live,
       x.raw
  FROM x, channel_members cm
  JOIN accounts a ON a.id = cm.account_id
 WHERE cm.channel_id = ANY (?::text[])
   AND a.kind = 'agent'
   AND (cm.channel_id = ANY (?::text[])
        OR cm.channel_id IN (SELECT w.channel_id FROM wanted w)
           AND (a.handle COLLATE "C" !~ '^[A-Za-z0-9_.-]*$'
                OR (cm.channel_id, translate(a.handle, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'))
                   IN (SELECT w.channel_id, w.handle FROM wanted w)))
 ORDER BY cm.channel_id, a.handle

-- name: RecordOwedMentions
-- 1 recordedAt, 2 agent account ids (text[]), 3 message ids (text[]); idempotent on the primary key.
-- No conflict target: naming one would need SELECT on owed_mentions, and the key is its only unique
-- constraint, so the effect is the same with INSERT alone.
INSERT INTO owed_mentions (agent_account_id, message_id, recorded_at_unix_ms)
SELECT u.agent_account_id, u.message_id, ?
  FROM unnest(?::text[], ?::text[]) AS u(agent_account_id, message_id)
    ON CONFLICT DO NOTHING

-- name: MarkNamedMentionsRouted
-- 1 routedAt, 2 seqs (bigint[]), 3 message ids (text[]): the messages whose records were all acknowledged, and
-- at the task's start those its committed source offset names (their records are in Kafka; docs/exactly-once.md,
-- 3.12). The (seq, id) pair guards against a message deleted and inserted again under the same id while its
-- records were in flight, and a messages table created again since the offset was written; a message the server
-- marked first keeps its marker.
UPDATE messages m
   SET mentions_routed_at = ?
  FROM unnest(?::bigint[], ?::text[]) AS u(seq, id)
 WHERE m.seq = u.seq
   AND m.id = u.id
   AND m.mentions_routed_at IS NULL

-- name: TakeScan
-- One mention task scans a database's messages: two would both publish every recovered mention. The task
-- holds this session-level advisory lock on a session of its own while it runs (released when the session ends:
-- a stop, a crash, a lost connection). Keyed by the messages table the search path finds, so connectors on other
-- databases or schemas never wait for each other (without the table, key 0: the pass reports the missing table).
-- The session names the connector and task, and sends TCP keepalives: a session whose client vanished (a worker
-- host lost) ends, and frees the lock, within about a minute instead of the operating system's two hours.
-- True when this session holds it.
-- 1 application_name of the session
SELECT set_config('application_name', ?, false) IS NOT NULL
       AND set_config('tcp_keepalives_idle', '30', false) IS NOT NULL
       AND set_config('tcp_keepalives_interval', '10', false) IS NOT NULL
       AND set_config('tcp_keepalives_count', '3', false) IS NOT NULL
       AND pg_try_advisory_lock(hashtext('outbox-relay mentions scan'),
                                COALESCE(to_regclass('messages')::oid::int, 0))

-- name: HoldsScan
-- Whether this session holds TakeScan's lock for the messages table the search path finds now: a table created,
-- dropped or recreated since the lock was taken changes the key, and the lock held is then released and taken
-- again, or two tasks would hold different keys for one table.
SELECT EXISTS (SELECT 1 FROM pg_locks l
                WHERE l.pid = pg_backend_pid() AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                  AND l.classid = hashtext('outbox-relay mentions scan')::oid
                  AND l.objid = COALESCE(to_regclass('messages')::oid, 0))

-- name: LetScanGo
-- Releases every advisory lock of this session (it takes none but TakeScan's).
SELECT true FROM (SELECT pg_advisory_unlock_all()) released

-- name: ScanHolder
-- The session holding TakeScan's lock, as a task that did not get it describes it: its application_name
-- (another connector's mention task, or a session someone opened by hand) and pid.
SELECT COALESCE(NULLIF(a.application_name, ''), 'a session without application_name') || ' (pid ' || l.pid || ')'
  FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
   AND l.classid = hashtext('outbox-relay mentions scan')::oid
   AND l.objid = COALESCE(to_regclass('messages')::oid, 0)
 LIMIT 1
