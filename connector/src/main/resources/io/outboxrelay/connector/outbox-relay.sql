-- Named statements of the outbox relay. {table} is replaced by the quoted, configured table name;
-- {col.<field>} by the quoted column of an event field (outbox.column.<field>, OutboxColumns.expand;
-- {col.headers} is NULL::jsonb when the table has none); :name is a parameter, bound by name
-- (NamedSql.Bindable). Every transition is guarded by the state it expects, so a stale task can never
-- undo a newer one.

-- name: SessionSetup
-- Once per relay session. A generic plan for every statement: the arrays of ClaimRows (the stamp's seqs,
-- the watched transactions) make a custom plan look cheaper for each size, so by default PostgreSQL plans
-- that statement again at every execution, which measured 2.4x its cost for an empty pass. The generic plan
-- of the claim reads the partial index in seq order whatever the backlog.
SET plan_cache_mode = force_generic_plan;

-- name: ClaimRows
-- One round trip of a relay task (docs/wakeup.md): stamps the rows it holds that were acknowledged, claims
-- the rows first in line, and tells what the wake-up needs to know, all in one statement and one snapshot.
--
-- The stamp: :stamp_seqs[i] is stamped with :stamp_fanouts[i], guarded by fanned_out_at IS NULL, and the
-- write receipts go out in the same transaction: :receipts are the rows' event ids joined by commas in chunks
-- under NOTIFY's 8000-byte payload limit (empty: receipts are off), sent once any row was stamped (a receipt
-- for a row another claimer stamped first is still true).
--
-- The claim: a lease-committing claim of up to :limit rows first in line (seq order) in this task's share of
-- subjects (0: none). A row attempted before (a failed delivery, a crashed or killed task, a lost claim
-- result) is claimed alone when it is first in line, and otherwise ends the batch before it: a bad row is
-- retried alone and never holds back or poisons its batch neighbours, and a subject's rows still go out in
-- seq order. Rows an earlier incarnation of this task leased before this one started (:takeover_until: the
-- server's time at this incarnation's first claim plus its outbox.lease.ms, so a lease that ends later,
-- taken with a longer lease or after that claim, is waited for) are claimed without waiting for their lease
-- to expire; the attempt stays counted, they may have been in flight. Only rows in this task's share are
-- reached. An incarnation is lowercase hex, so a connector whose name extends this task's ('<task>#x', owners
-- '<task>#x-3#<hex>') never matches :task. Every row comes back with the number of rows the claim found in
-- line (:limit when more may wait).
--
-- The wake-up: of the transactions :watch, those still in progress in this statement's snapshot (the one
-- the claim read: a watched writer that is not in progress any more has committed rows this claim saw, or
-- none); and with :capture, every transaction in progress in that snapshot.
--
-- The first row carries the statement's results (stamped, receipts sent, watch, in progress) and, like every
-- other, one claimed row; with nothing claimed it is the only row, its claimed columns null.
WITH s AS (
  UPDATE {table} e
     SET fanned_out_at = now(), fanout = x.fanout, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
    FROM unnest(:stamp_seqs::bigint[], :stamp_fanouts::jsonb[]) AS x(seq, fanout)
   WHERE e.seq = x.seq AND e.fanned_out_at IS NULL
  RETURNING 1),
st AS (SELECT count(*) AS stamped FROM s),
rc AS (SELECT count(*) AS sent
         FROM (SELECT pg_notify(:channel, r) FROM st, unnest(:receipts::text[]) r WHERE st.stamped > 0) q),
c AS (
  SELECT seq, attempts, lease_until AS prev_lease FROM {table}
   WHERE fanned_out_at IS NULL AND poisoned_at IS NULL
     AND (lease_until IS NULL OR lease_until < now()
          OR (lease_until <= :takeover_until::timestamptz AND lease_owner <> :owner
              AND (lease_owner = :task
                   OR (starts_with(lease_owner, :task || '#') AND substr(lease_owner, length(:task) + 2) ~ '^[0-9a-f]+$'))))
     AND (next_attempt_at IS NULL OR next_attempt_at <= now())
     AND (:task_count::int = 1 OR mod(hashtext({col.subject}::text)::bigint + 2147483648, :task_count::int) = :task_index::int)
     AND NOT (seq = ANY(:stamp_seqs::bigint[]))
   ORDER BY seq
   LIMIT :limit
   FOR UPDATE SKIP LOCKED),
h AS (SELECT min(seq) AS head, min(seq) FILTER (WHERE attempts > 0) AS cut, count(*) AS found FROM c),
p AS (
  SELECT c.seq, c.prev_lease, h.found FROM c, h
   WHERE CASE WHEN h.cut = h.head THEN c.seq = h.head ELSE h.cut IS NULL OR c.seq < h.cut END),
u AS (
  UPDATE {table} e
     SET lease_owner = :owner, lease_until = now() + :lease_ms::bigint * interval '1 millisecond',
         attempts = e.attempts + 1
    FROM p
   WHERE e.seq = p.seq
  RETURNING e.seq, e.{col.id} AS id, e.{col.type} AS type, e.{col.subject} AS subject, e.{col.payload} AS payload,
            e.{col.headers} AS headers, e.{col.occurred_at} AS occurred_at, e.attempts, e.last_error,
            p.prev_lease, p.found),
w AS (
  SELECT ARRAY(SELECT x FROM unnest(:watch::text[]) x
                WHERE NOT pg_visible_in_snapshot(x::xid8, pg_current_snapshot())) AS running,
         CASE WHEN :capture::boolean
              THEN ARRAY(SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) x) END AS in_progress)
-- headers come back as text and are split by the task (HeadersJson): splitting them here with
-- jsonb_each per row cost about a sixth of the claim+stamp time on the database.
SELECT st.stamped, rc.sent, w.running, w.in_progress,
       u.seq, u.id::text, u.type, u.subject, u.payload::text, u.occurred_at, u.attempts, u.last_error,
       u.headers::text, u.prev_lease < now() AS lease_expired, u.prev_lease >= now() AS taken_over, u.found
  FROM st CROSS JOIN rc CROSS JOIN w LEFT JOIN u ON true
 ORDER BY u.seq;

-- name: TakeoverHorizon
-- At a task's start: leases an earlier incarnation took until now end no later than this.
SELECT now() + :lease_ms::bigint * interval '1 millisecond';

-- name: ReleaseLeases
-- Gives rows back: lease cleared, attempt returned when the row's records never left the task,
-- retry delayed when it failed; one entry per row in each array.
UPDATE {table} e
   SET lease_owner = NULL, lease_until = NULL,
       attempts = GREATEST(e.attempts - x.giveback, 0),
       next_attempt_at = CASE WHEN x.delay_ms > 0 THEN now() + x.delay_ms * interval '1 millisecond' END,
       last_error = COALESCE(x.error, e.last_error)
  FROM unnest(:seqs::bigint[], :givebacks::int[], :delays_ms::bigint[], :errors::text[])
       AS x(seq, giveback, delay_ms, error)
 WHERE e.seq = x.seq AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL AND e.lease_owner = :owner;

-- name: ReturnAttemptKeepLease
-- At a stop with connector-defined transaction boundaries (docs/exactly-once.md, 3.7): rows still in flight
-- may belong to a transaction whose commit outcome is unknown, so they keep lease_owner and lease_until (the
-- next incarnation reconciles, then takes them over); only their attempt is given back.
UPDATE {table}
   SET attempts = GREATEST(attempts - 1, 0)
 WHERE seq = ANY(:seqs::bigint[]) AND lease_owner = :owner AND fanned_out_at IS NULL AND poisoned_at IS NULL;

-- name: RecoverableRows
-- Reconciliation at a task's start (docs/exactly-once.md, 3.5): of the rows a committed source offset names,
-- those in this task's share, with their type and id, and whether the offset's owner still leases them
-- un-fanned and not poisoned (then their records are in Kafka and only the stamp is missing).
SELECT seq, {col.type}, {col.id}::text, fanned_out_at IS NOT NULL,
       (lease_owner = :owner AND fanned_out_at IS NULL AND poisoned_at IS NULL)
  FROM {table}
 WHERE seq = ANY(:seqs::bigint[])
   AND (:task_count::int = 1 OR mod(hashtext({col.subject}::text)::bigint + 2147483648, :task_count::int) = :task_index::int)
 ORDER BY seq;

-- name: StampRecovered
-- leased by the offset's owner -> fanned out, without producing: :seqs[i] gets :fanouts[i] ({"<subscription>":
-- {"recovered": "source offset"}} per matching subscription). The same guard as RecoverableRows, so a row
-- stamped, requeued or claimed by someone else meanwhile is left alone. Returns the ids stamped, for the
-- receipts (NotifyReceipts, same transaction).
UPDATE {table} e
   SET fanned_out_at = now(), fanout = x.fanout, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
  FROM unnest(:seqs::bigint[], :fanouts::jsonb[]) AS x(seq, fanout)
 WHERE e.seq = x.seq AND e.lease_owner = :owner AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL
RETURNING e.{col.id}::text;

-- name: NotifyReceipts
-- The write receipts of a stamp that is not ClaimRows' (reconciliation): one NOTIFY per chunk of ids.
SELECT count(pg_notify(:channel, r)) FROM unnest(:receipts::text[]) r;

-- name: PoisonRows
-- seqs[i] is poisoned with reasons[i].
UPDATE {table} e
   SET poisoned_at = now(), last_error = x.reason, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
  FROM unnest(:seqs::bigint[], :reasons::text[]) AS x(seq, reason)
 WHERE e.seq = x.seq AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL
RETURNING e.seq, e.{col.id}::text, e.{col.type}, e.{col.subject}, e.attempts, e.{col.occurred_at},
          e.poisoned_at, e.last_error;

-- name: ExtendLeases
-- Keeps the rows a task holds reserved.
UPDATE {table}
   SET lease_until = now() + :lease_ms::bigint * interval '1 millisecond'
 WHERE seq = ANY(:seqs::bigint[]) AND lease_owner = :owner AND fanned_out_at IS NULL;

-- name: ReleaseUnknownLeases
-- Rows leased by this incarnation of the task that it does not know it holds: a claim whose commit
-- succeeded while its result was lost with the connection. Given back at once instead of waiting for
-- their leases to expire, with the attempt returned (they never reached Connect), except for the seqs
-- the task passes: rows whose attempt it returned once already keep it, so a batch whose claim keeps
-- losing its result is not claimed again as fresh rows forever but retried one row at a time, counting
-- attempts (the task poisons a row whose count passes outbox.max.attempts this way: it is never read).
-- :keep_attempt are those seqs, :held the rows the task knows it holds.
UPDATE {table}
   SET lease_owner = NULL, lease_until = NULL,
       attempts = CASE WHEN seq = ANY(:keep_attempt::bigint[]) THEN attempts ELSE GREATEST(attempts - 1, 0) END
 WHERE lease_owner = :owner AND fanned_out_at IS NULL AND poisoned_at IS NULL
   AND NOT (seq = ANY(:held::bigint[]))
RETURNING seq, attempts;

-- name: Backlog
-- Rows waiting to be fanned out (capped so a huge backlog stays cheap to count) and the age of the
-- oldest one, both from the claim's partial index.
SELECT (SELECT count(*) FROM (SELECT 1 FROM {table}
                                WHERE fanned_out_at IS NULL AND poisoned_at IS NULL LIMIT 10000000) b),
       (SELECT (EXTRACT(EPOCH FROM now() - {col.occurred_at}) * 1000)::bigint FROM {table}
         WHERE fanned_out_at IS NULL AND poisoned_at IS NULL ORDER BY seq LIMIT 1);

-- name: DeleteRetained
-- Retention: one small batch of fanned rows older than the cutoff. SKIP LOCKED keeps it off rows a
-- claim or stamp holds; poisoned and un-fanned rows are never touched.
DELETE FROM {table}
 WHERE seq IN (SELECT seq FROM {table}
                WHERE fanned_out_at IS NOT NULL AND fanned_out_at < now() - :retention_ms::bigint * interval '1 millisecond'
                  AND poisoned_at IS NULL
                ORDER BY seq
                LIMIT :limit
                FOR UPDATE SKIP LOCKED);
