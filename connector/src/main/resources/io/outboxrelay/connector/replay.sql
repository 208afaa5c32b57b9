-- Named statements of replay to one subscription (docs/replay.md, migration V6). {table} is the quoted outbox
-- table, {replays} the quoted <table>_replays next to it, {col.<field>} the quoted column of an event field;
-- :name is a parameter. Every write is guarded by the lease it expects, so a task that lost a request (to a
-- cancel, or to another task after its lease ran out) can never move it.

-- name: ClaimReplay
-- Leases one open request of this connector's subscriptions (:subscriptions) whose lease is free, expired or
-- already :owner's, the oldest first; with :id > 0 only that request, which renews its lease. A request for a
-- subscription no running connector serves stays open (docs/replay.md).
WITH c AS (
  SELECT id FROM {replays}
   WHERE done_at IS NULL AND cancelled_at IS NULL AND subscription = ANY(:subscriptions::text[])
     AND (lease_until IS NULL OR lease_until < now() OR lease_owner = :owner)
     AND (:id::bigint = 0 OR id = :id::bigint)
   ORDER BY id
   LIMIT 1
   FOR UPDATE SKIP LOCKED)
UPDATE {replays} r
   SET lease_owner = :owner, lease_until = now() + :lease_ms::bigint * interval '1 millisecond'
  FROM c
 WHERE r.id = c.id
RETURNING r.id, r.subscription, r.through_seq, r.progress_seq, r.sent, r.from_at::text || ' .. ' || r.to_at::text;

-- name: ReplayChunk
-- The next rows of a request this owner leases, in the columns of ClaimRows (ClaimedRowReader reads both):
-- rows fanned out (fanned_out_at and fanout are only read), with occurred_at in the request's range, after
-- :after and up to the request's through_seq. A row whose text passes :max_record_bytes comes back unread.
-- Walks the primary key in seq order from :after; nothing when the request is cancelled or not :owner's.
SELECT e.seq, e.{col.id}::text, e.{col.type}::text, e.{col.subject}::text, COALESCE(e.{col.payload}::text, 'null'),
       e.{col.occurred_at}, 0, NULL::text, e.{col.headers}::text, false, false, 0::bigint, b.bytes,
       b.bytes <= :max_record_bytes::bigint, NULL::text
  FROM {replays} r
  JOIN {table} e ON e.seq > :after::bigint AND e.seq <= r.through_seq
                AND e.{col.occurred_at} >= r.from_at AND e.{col.occurred_at} <= r.to_at
  CROSS JOIN LATERAL (SELECT COALESCE(octet_length(e.{col.id}::text), 0) + COALESCE(octet_length(e.{col.type}::text), 0)
                             + COALESCE(octet_length(e.{col.subject}::text), 0)
                             + octet_length(COALESCE(e.{col.payload}::text, 'null'))
                             + COALESCE(octet_length(e.{col.headers}::text), 0) AS bytes) b
 WHERE r.id = :id::bigint AND r.lease_owner = :owner AND r.done_at IS NULL AND r.cancelled_at IS NULL
   AND e.fanned_out_at IS NOT NULL
 ORDER BY e.seq
 LIMIT :limit;

-- name: ReplayProgress
-- Every record up to :progress was acknowledged: the walk moves there, :sent records more, the lease renewed;
-- with :done the request is closed and its lease cleared. Never moves backwards.
UPDATE {replays}
   SET progress_seq = :progress::bigint, sent = sent + :sent::bigint, last_error = NULL,
       done_at = CASE WHEN :done::boolean THEN now() END,
       lease_owner = CASE WHEN :done::boolean THEN NULL ELSE lease_owner END,
       lease_until = CASE WHEN :done::boolean THEN NULL
                          ELSE now() + :lease_ms::bigint * interval '1 millisecond' END
 WHERE id = :id::bigint AND lease_owner = :owner AND done_at IS NULL AND cancelled_at IS NULL
   AND progress_seq <= :progress::bigint;

-- name: ReplayFailed
-- A chunk was not delivered: why, for operators; the lease stays, and the task sends the chunk again.
UPDATE {replays} SET last_error = :error WHERE id = :id::bigint AND lease_owner = :owner;

-- name: ReleaseReplay
-- A stopping task gives its request back: another task may take it at once.
UPDATE {replays} SET lease_owner = NULL, lease_until = NULL WHERE id = :id::bigint AND lease_owner = :owner;
