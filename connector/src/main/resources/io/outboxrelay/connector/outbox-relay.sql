-- Named statements of the outbox relay. {table} is replaced by the quoted, configured table name.
-- Every transition is guarded by the state it expects, so a stale task can never undo a newer one.

-- name: ClaimRows
-- Lease-committing claim in seq order, for this task's share of subjects. Fresh rows (never
-- attempted) are claimed in batches; rows attempted before (a failed pass, a crashed or killed task)
-- are claimed with limit 1, so a bad row is retried alone and never holds back or poisons its batch
-- neighbours. Params: fresh?, relay task count, task count, task index, limit, lease owner, lease ms.
WITH c AS (
  SELECT seq, lease_until AS prev_lease FROM {table}
   WHERE fanned_out_at IS NULL AND poisoned_at IS NULL
     AND (attempts = 0) = ?::boolean
     AND (lease_until IS NULL OR lease_until < now())
     AND (next_attempt_at IS NULL OR next_attempt_at <= now())
     AND (?::int = 1 OR mod(hashtext(subject)::bigint + 2147483648, ?::int) = ?::int)
   ORDER BY seq
   LIMIT ?
   FOR UPDATE SKIP LOCKED),
u AS (
  UPDATE {table} e
     SET lease_owner = ?, lease_until = now() + ?::bigint * interval '1 millisecond', attempts = e.attempts + 1
    FROM c
   WHERE e.seq = c.seq
  RETURNING e.seq, e.id, e.type, e.subject, e.payload, e.headers, e.occurred_at, e.attempts, e.last_error,
            c.prev_lease IS NOT NULL AS lease_expired)
-- headers come back as text and are split by the task (HeadersJson): splitting them here with
-- jsonb_each per row cost about a sixth of the claim+stamp time on the database.
SELECT u.seq, u.id::text, u.type, u.subject, u.payload::text, u.occurred_at, u.attempts, u.last_error,
       u.headers::text, u.lease_expired
  FROM u
 ORDER BY u.seq;

-- name: StampFannedOut
-- One statement per group of acknowledged rows. Params: seq[], fanout jsonb[]. No RETURNING: the
-- task knows the ids it stamps (a receipt for a row another claimer stamped first is still true).
UPDATE {table} e
   SET fanned_out_at = now(), fanout = x.fanout, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
  FROM unnest(?::bigint[], ?::jsonb[]) AS x(seq, fanout)
 WHERE e.seq = x.seq AND e.fanned_out_at IS NULL;

-- name: Notify
SELECT pg_notify(?, ?);

-- name: ReleaseLeases
-- Gives rows back: lease cleared, attempt returned when the row's records never left the task,
-- retry delayed when it failed. Params: seq[], attempts to give back[], delay ms[], error[], owner.
UPDATE {table} e
   SET lease_owner = NULL, lease_until = NULL,
       attempts = GREATEST(e.attempts - x.giveback, 0),
       next_attempt_at = CASE WHEN x.delay_ms > 0 THEN now() + x.delay_ms * interval '1 millisecond' END,
       last_error = COALESCE(x.error, e.last_error)
  FROM unnest(?::bigint[], ?::int[], ?::bigint[], ?::text[]) AS x(seq, giveback, delay_ms, error)
 WHERE e.seq = x.seq AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL AND e.lease_owner = ?;

-- name: PoisonRows
-- Params: seq[], reason[].
UPDATE {table} e
   SET poisoned_at = now(), last_error = x.reason, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
  FROM unnest(?::bigint[], ?::text[]) AS x(seq, reason)
 WHERE e.seq = x.seq AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL
RETURNING e.seq, e.id::text, e.type, e.subject, e.attempts, e.occurred_at, e.poisoned_at, e.last_error;

-- name: ExtendLeases
-- Keeps rows that are still in flight reserved. Params: lease ms, seq[], owner.
UPDATE {table}
   SET lease_until = now() + ?::bigint * interval '1 millisecond'
 WHERE seq = ANY(?::bigint[]) AND lease_owner = ? AND fanned_out_at IS NULL;

-- name: ReleaseUnknownLeases
-- Rows leased by this incarnation of the task that it does not know it holds: a claim whose commit
-- succeeded while its result was lost with the connection. Given back at once instead of waiting for
-- their leases to expire, with the attempt returned (they never reached Connect), except for the seqs
-- the task passes: rows whose attempt it returned once already keep it, so a batch whose claim keeps
-- losing its result is not claimed again as fresh rows forever but retried one row at a time, counting
-- attempts (the task poisons a row whose count passes outbox.max.attempts this way: it is never read).
-- Params: seqs that keep their attempt, owner (this incarnation), seqs still held.
UPDATE {table}
   SET lease_owner = NULL, lease_until = NULL,
       attempts = CASE WHEN seq = ANY(?::bigint[]) THEN attempts ELSE GREATEST(attempts - 1, 0) END
 WHERE lease_owner = ? AND fanned_out_at IS NULL AND poisoned_at IS NULL
   AND NOT (seq = ANY(?::bigint[]))
RETURNING seq, attempts;

-- name: ReleasePreviousIncarnations
-- At start: rows leased by earlier incarnations of this task (owner '<task>#<incarnation>', or just
-- '<task>' from versions without incarnations). Given back at once instead of waiting for their leases
-- to expire; the attempt stays counted because they may have been in flight. An incarnation is lowercase
-- hex: a connector whose name extends this task's ('<task>#x', owners '<task>#x-3' or '<task>#x-3#<hex>')
-- never matches. Params: task owner, task owner || '#' twice, this incarnation's owner.
UPDATE {table}
   SET lease_owner = NULL, lease_until = NULL
 WHERE (lease_owner = ? OR (starts_with(lease_owner, ?) AND substr(lease_owner, length(?) + 1) ~ '^[0-9a-f]+$'))
   AND lease_owner <> ? AND fanned_out_at IS NULL AND poisoned_at IS NULL;

-- name: Backlog
-- Rows waiting to be fanned out (capped so a huge backlog stays cheap to count) and the age of the
-- oldest one, both from the claim's partial index.
SELECT (SELECT count(*) FROM (SELECT 1 FROM {table}
                                WHERE fanned_out_at IS NULL AND poisoned_at IS NULL LIMIT 10000000) b),
       (SELECT (EXTRACT(EPOCH FROM now() - occurred_at) * 1000)::bigint FROM {table}
         WHERE fanned_out_at IS NULL AND poisoned_at IS NULL ORDER BY seq LIMIT 1);

-- name: DeleteRetained
-- Retention: one small batch of fanned rows older than the cutoff. SKIP LOCKED keeps it off rows a
-- claim or stamp holds; poisoned and un-fanned rows are never touched. Params: retention ms, limit.
DELETE FROM {table}
 WHERE seq IN (SELECT seq FROM {table}
                WHERE fanned_out_at IS NOT NULL AND fanned_out_at < now() - ?::bigint * interval '1 millisecond'
                  AND poisoned_at IS NULL
                ORDER BY seq
                LIMIT ?
                FOR UPDATE SKIP LOCKED);
