-- Named statements of the outbox relay. {table} is replaced by the quoted, configured table name;
-- {col.<field>} by the quoted column of an event field (outbox.column.<field>, OutboxColumns.expand;
-- {col.headers} is NULL::jsonb when the table has none); :name is a parameter, bound by name
-- (NamedSql.Bindable). Every transition is guarded by the state it expects, so a stale task can never
-- undo a newer one, with one deliberate exception: the stamp of records that were acknowledged wins over another
-- claimer's poisoning of the same row (ClaimRows), since the event was delivered.

-- name: SessionSetup
-- Once per relay session. A generic plan for every statement: the arrays of ClaimRows (the stamp's seqs and
-- fan-outs) make a custom plan look cheaper for each size, so by default PostgreSQL plans
-- that statement again at every execution, which measured 2.4x its cost for an empty pass. A generic plan is
-- kept as long as the session lives, so it must not depend on how big the table was when it was made: on a
-- table of a few rows (a fresh table, one just emptied by retention, statistics not yet taken) every way to
-- read it looks alike, and the plan chosen then is kept as the table grows. Measured at 500 events/s, one
-- minute into a fresh table: a sequential scan of the whole table at every claim (24 ms a claim); with that
-- turned off, the stamp's join to its seqs read the whole primary key instead (13,600 buffers, 25 ms), and
-- the claim read the partial index as a bitmap, which sorts every entry, dead ones included, before the
-- limit applies. So the sessions take only plans that stay right at any size: no sequential scan, no bitmap
-- (the claim reads the partial index in seq order, stops at the limit and marks dead entries as it passes
-- them), and no statement joins the table to a list of seqs: it reads exactly those rows with seq = ANY(those
-- seqs) through the primary key, once, and finds each row's values in the lists by width_bucket, a binary search
-- (JdbcOutboxStore sorts the lists by seq). A join on seq read the whole primary key, and one that also said
-- seq = ANY(...) read the key once per listed row and sorted the list again each time: a stamp of 2,000 rows
-- on a partitioned table took 20 s (JdbcOutboxStoreIT checks the claim's plan; PartitionedOutboxIT a large
-- claim's on a partitioned table). A statement with no index to use still scans.
SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; SET enable_bitmapscan = off;

-- name: ClaimRows
-- One round trip of a relay task (docs/wakeup.md): stamps the rows it holds that were acknowledged and claims
-- the rows first in line, in one statement and one snapshot.
--
-- The stamp: :stamp_seqs[i] (ascending) is stamped with :stamp_fanouts[i], guarded by fanned_out_at IS NULL, and the
-- write receipts go out in the same transaction: :receipts are the rows' event ids joined by commas in chunks
-- under NOTIFY's 8000-byte payload limit (empty: receipts are off), sent once any row was stamped (a receipt
-- for a row another claimer stamped first is still true).
--
-- The claim: a lease-committing claim of up to :limit rows first in line (seq order) in this task's share of
-- subjects (0: none), never one of the rows this statement stamps. The share is a range of the subject's hash
-- (SubjectShare), the second key of the claim's index (migration V10): the index scan passes over the other
-- shares' rows without reading them from the table. A row attempted before (a failed
-- delivery, a crashed or killed task, a lost claim result) is claimed alone when it is first in line, and
-- otherwise ends the batch before it: a bad row is retried alone and never holds back or poisons its batch
-- neighbours, and a subject's rows still go out in seq order. Rows an earlier incarnation of this task
-- leased before this one started (:takeover_until: the server's time at this incarnation's first claim plus
-- its outbox.lease.ms, so a lease that ends later, taken with a longer lease or after that claim, is waited
-- for) are claimed without waiting for their lease to expire; the attempt stays counted, they may have been
-- in flight. Only rows in this task's share are reached. An incarnation is lowercase hex, so a connector
-- whose name extends this task's ('<task>#x', owners '<task>#x-3#<hex>') never matches :task. Every row
-- comes back with the number of rows the claim found in line (:limit when more may wait).
-- With outbox.ordering=strict (docs/ordering.md) StrictOrderProbe stands where /*strict_order*/ is: a row is
-- claimed only when it heads its subject's line. The default claim keeps no trace of it: a filter that is never
-- true still changed the plan of a partitioned table's claim (a drain of 100,000 rows took twice as long).
-- The claim is bounded by bytes too: a row's bytes are its id, type, subject, payload and headers as the
-- text the task reads, and the rows in line are leased while their sum stays within :max_claim_bytes (the
-- first always); the rest count as found, so the task claims again at once. A row the task must not
-- produce anyway, because it is claimed more than :max_attempts times or its bytes alone pass
-- :max_record_bytes (its record would be larger still), comes back without type, subject, payload and
-- headers: the task poisons it without reading what may be megabytes.
--
-- h is MATERIALIZED: inlined, as PostgreSQL does with a CTE read once, its aggregate over c was computed again for
-- every row of c (a claim of 2,000 rows: 0.77 s, 19 ms materialized). u reaches the rows of p by their seqs alone and
-- claimed joins the two afterwards: an update joined to p as well let a partitioned table's plan look up every seq
-- of p in every partition once per row of p (a claim of 2,000 rows read some 560,000 buffers, now 10,000).
--
-- Each row is one claimed row (columns 1-15) with the statement's results after it (stamped, receipts sent:
-- 16-17); with nothing claimed there is one row, its claimed columns null.
-- The stamp clears poisoned_at: a row another claimer poisoned while this task's records of it waited for their
-- acknowledgement (this task's lease ran out) was delivered all the same, and is fanned out, not poisoned (its
-- last_error keeps the reason).
WITH s AS (
  UPDATE {table} e
     SET fanned_out_at = now(), fanout = (:stamp_fanouts::text[])[width_bucket(e.seq, :stamp_seqs::bigint[])]::jsonb,
         lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL, poisoned_at = NULL
   WHERE e.seq = ANY(:stamp_seqs::bigint[]) AND e.fanned_out_at IS NULL
  RETURNING 1),
st AS (SELECT count(*) AS stamped FROM s),
rc AS (SELECT count(*) AS sent
         FROM (SELECT pg_notify(:channel, r) FROM st, unnest(:receipts::text[]) r WHERE st.stamped > 0) q),
c AS (
  SELECT seq, attempts, lease_until AS prev_lease, COALESCE({col.payload}::text, 'null') AS payload,
         {col.headers}::text AS headers,
         -- a NULL field (a column changed to allow it) counts 0: the row is read, and the task names the field
         COALESCE(octet_length({col.id}::text), 0) + COALESCE(octet_length({col.type}::text), 0)
           + COALESCE(octet_length({col.subject}::text), 0) AS own_bytes
    FROM {table} r
   WHERE fanned_out_at IS NULL AND poisoned_at IS NULL
     AND (lease_until IS NULL OR lease_until < now()
          OR (lease_until <= :takeover_until::timestamptz AND lease_owner <> :owner
              AND (lease_owner = :task
                   OR (starts_with(lease_owner, :task || '#') AND substr(lease_owner, length(:task) + 2) ~ '^[0-9a-f]+$'))))
     AND (next_attempt_at IS NULL OR next_attempt_at <= now())
     AND hashtext({col.subject}::text)::bigint + 2147483648 BETWEEN :share_low::bigint AND :share_high::bigint
     AND NOT (seq = ANY(:stamp_seqs::bigint[]))
     /*strict_order*/
   ORDER BY seq
   LIMIT :limit
   FOR UPDATE SKIP LOCKED),
h AS MATERIALIZED (SELECT min(seq) AS head, min(seq) FILTER (WHERE attempts > 0) AS cut, count(*) AS found FROM c),
l AS (
  SELECT c.seq, c.prev_lease, c.payload, c.headers, h.found, b.bytes, sum(b.bytes) OVER w AS running,
         row_number() OVER w AS n
    FROM c, h, LATERAL (SELECT c.own_bytes + octet_length(c.payload) + COALESCE(octet_length(c.headers), 0) AS bytes) b
   WHERE CASE WHEN h.cut = h.head THEN c.seq = h.head ELSE h.cut IS NULL OR c.seq < h.cut END
  WINDOW w AS (ORDER BY c.seq)),
p AS (SELECT l.seq, l.prev_lease, l.payload, l.headers, l.found, l.bytes FROM l
       WHERE l.n = 1 OR l.running <= :max_claim_bytes::bigint),
u AS (
  UPDATE {table} e
     SET lease_owner = :owner, lease_until = now() + :lease_ms::bigint * interval '1 millisecond',
         -- LEAST: attempts set to the top of an int by hand make a row to poison, not an overflow that fails the claim
         attempts = LEAST(e.attempts, 2147483646) + 1
   WHERE e.seq = ANY(ARRAY(SELECT p.seq FROM p))
  RETURNING e.seq, e.{col.id} AS id, e.{col.type} AS type, e.{col.subject} AS subject,
            e.{col.occurred_at} AS occurred_at, e.attempts, e.last_error),
-- headers come back as text and are split by the task (HeadersJson): splitting them here with
-- jsonb_each per row cost about a sixth of the claim+stamp time on the database. Payload and headers are
-- made text once, in c, where their bytes are counted. The task reads every text as bytes and decodes it
-- itself (ClaimedRowReader): a row whose text has no characters is poisoned, never a failed claim. A SQL_ASCII
-- database stores any bytes and a single-byte one (WIN1252, ...) every byte, also those it maps to no character,
-- and the server refuses to send such text to a UTF8 client: in those (x.raw, the encoding's name) the texts
-- travel as the hex of their bytes, and the task decodes them ({sent(e)}: e as it travels; DatabaseText.expand).
x AS (SELECT {raw_encoding} AS raw),
claimed AS (
  SELECT u.seq, t.id, t.type, t.subject, t.payload, u.occurred_at, u.attempts, t.last_error, t.headers,
         p.prev_lease < now() AS lease_expired, p.prev_lease >= now() AS taken_over, p.found, p.bytes, r.read, x.raw
    FROM u JOIN p ON p.seq = u.seq CROSS JOIN x,
         LATERAL (SELECT u.attempts <= :max_attempts::int AND p.bytes <= :max_record_bytes::bigint AS read) r,
         LATERAL (SELECT {sent(v.id)} AS id, {sent(v.type)} AS type, {sent(v.subject)} AS subject,
                         {sent(v.payload)} AS payload, {sent(v.headers)} AS headers, {sent(v.last_error)} AS last_error
                    FROM (SELECT u.id::text AS id, CASE WHEN r.read THEN u.type::text END AS type,
                                 CASE WHEN r.read THEN u.subject::text END AS subject,
                                 CASE WHEN r.read THEN p.payload END AS payload,
                                 CASE WHEN r.read THEN p.headers END AS headers, u.last_error) v) t)
SELECT k.seq, k.id, k.type, k.subject, k.payload, k.occurred_at, k.attempts, k.last_error, k.headers,
       k.lease_expired, k.taken_over, k.found, k.bytes, k.read, k.raw,
       st.stamped, rc.sent
  FROM st CROSS JOIN rc LEFT JOIN claimed k ON true
 ORDER BY k.seq;

-- name: StrictOrderProbe
-- outbox.ordering=strict (docs/ordering.md): JdbcOutboxStore puts this, text of this file, never of the
-- configuration, in ClaimRows for /*strict_order*/, after {table} is replaced and before the columns are.
-- A row is claimed only when it heads its subject's line: no earlier row of its subject is pending (backing
-- off, leased by anyone, this task included, or free but not claimed by this statement), except the rows this
-- statement stamps. So a subject has at most one row unacknowledged, and a failed row holds its subject's later
-- rows back until it is stamped or poisoned. The probe reads the subject index of migration V7,
-- <table>_subject_pending_idx (on the subject's hash: any subject can be indexed; the subjects are compared
-- too), backwards from the row (a scalar subquery: PostgreSQL drops the ORDER BY of an
-- EXISTS): a row held back finds the row before it at once, not after the entries its subject's stamped rows
-- leave in the index until VACUUM (read forwards, a hot subject's drain read them all, for every row, at every
-- claim: 33 ms a claim at 1000 rows). "No earlier row" is said as "the earlier row, or this one, is not earlier":
-- PostgreSQL guesses that a subquery IS NULL holds for 0.5 % of rows, and planned the rest of the claim for one
-- row (joins made once per row: 800 ms for a claim of 1000); a comparison it guesses at a third.
     AND COALESCE((SELECT b.seq FROM {table} b
                    WHERE hashtext(b.{col.subject}::text) = hashtext(r.{col.subject}::text)
                      AND b.{col.subject} = r.{col.subject} AND b.seq < r.seq
                      AND b.fanned_out_at IS NULL AND b.poisoned_at IS NULL
                      AND NOT (b.seq = ANY(:stamp_seqs::bigint[]))
                    ORDER BY hashtext(b.{col.subject}::text) DESC, b.seq DESC
                    LIMIT 1), r.seq) >= r.seq

-- name: TakeoverHorizon
-- At a task's start: leases an earlier incarnation took until now end no later than this.
SELECT now() + :lease_ms::bigint * interval '1 millisecond';

-- name: ReleaseLeases
-- Gives rows back: lease cleared, attempt returned when the row's records never left the task,
-- retry delayed when it failed; one entry per row in each array, :seqs ascending (SessionSetup: width_bucket).
UPDATE {table} e
   SET lease_owner = NULL, lease_until = NULL,
       attempts = GREATEST(e.attempts - (:givebacks::int[])[width_bucket(e.seq, :seqs::bigint[])], 0),
       next_attempt_at = CASE WHEN (:delays_ms::bigint[])[width_bucket(e.seq, :seqs::bigint[])] > 0
                              THEN now() + (:delays_ms::bigint[])[width_bucket(e.seq, :seqs::bigint[])]
                                           * interval '1 millisecond' END,
       last_error = COALESCE((:errors::text[])[width_bucket(e.seq, :seqs::bigint[])], e.last_error)
 WHERE e.seq = ANY(:seqs::bigint[]) AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL
   AND e.lease_owner = :owner;

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
   AND hashtext({col.subject}::text)::bigint + 2147483648 BETWEEN :share_low::bigint AND :share_high::bigint
 ORDER BY seq;

-- name: StampRecovered
-- leased by the offset's owner -> fanned out, without producing: :seqs[i] gets :fanouts[i] ({"<subscription>":
-- {"recovered": "source offset"}} per matching subscription; :seqs ascending).
-- The same guard as RecoverableRows, so a row stamped, requeued or claimed by someone else meanwhile is left alone. Returns the ids stamped, for the
-- receipts (NotifyReceipts, same transaction).
UPDATE {table} e
   SET fanned_out_at = now(), fanout = (:fanouts::text[])[width_bucket(e.seq, :seqs::bigint[])]::jsonb, lease_owner = NULL,
       lease_until = NULL, next_attempt_at = NULL
 WHERE e.seq = ANY(:seqs::bigint[]) AND e.lease_owner = :owner AND e.fanned_out_at IS NULL
   AND e.poisoned_at IS NULL
RETURNING e.{col.id}::text;

-- name: NotifyReceipts
-- The write receipts of a stamp that is not ClaimRows' (reconciliation): one NOTIFY per chunk of ids.
SELECT count(pg_notify(:channel, r)) FROM unnest(:receipts::text[]) r;

-- name: PoisonRows
-- seqs[i] (ascending) is poisoned with reasons[i], unless another claimer leases it now (this task's lease lapsed and
-- the row was claimed again: its outcome is the new claimer's, and a row poisoned here could be stamped there too),
-- or its attempts are no longer attempts[i], the count this task last saw: another claimer claimed it since (and let
-- it go), or an operator requeued it (which sets 0), and the outcome is no longer this task's.
-- What it returns is for one log line and one poison record per row:
-- id, type and subject cut at :text_max characters, and every text as ClaimRows sends it (the hex of its bytes where
-- the server might refuse to send it: x.raw).
WITH p AS (
  UPDATE {table} e
     SET poisoned_at = now(), last_error = (:reasons::text[])[width_bucket(e.seq, :seqs::bigint[])], lease_owner = NULL,
         lease_until = NULL, next_attempt_at = NULL
   WHERE e.seq = ANY(:seqs::bigint[]) AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL
     AND (e.lease_owner IS NULL OR e.lease_owner = :owner)
     AND e.attempts = (:attempts::int[])[width_bucket(e.seq, :seqs::bigint[])]
  RETURNING e.seq, left(e.{col.id}::text, :text_max::int) AS id, left(e.{col.type}::text, :text_max::int) AS type,
            left(e.{col.subject}::text, :text_max::int) AS subject, e.attempts, e.{col.occurred_at} AS occurred_at,
            e.poisoned_at, e.last_error),
x AS (SELECT {raw_encoding} AS raw)
SELECT p.seq, {sent(p.id)}, {sent(p.type)}, {sent(p.subject)}, p.attempts, p.occurred_at, p.poisoned_at,
       {sent(p.last_error)}, x.raw
  FROM p CROSS JOIN x;

-- name: ExtendLeases
-- Keeps the rows a task holds reserved.
UPDATE {table}
   SET lease_until = now() + :lease_ms::bigint * interval '1 millisecond'
 WHERE seq = ANY(:seqs::bigint[]) AND lease_owner = :owner AND fanned_out_at IS NULL;

-- name: WakeTasks
-- At a stop that leaves rows to the other tasks: leases given back or kept, or, with outbox.ordering=strict, any
-- stamp (a later row of its subject may wait behind it). Every task of the table claims at once, as after a writer's
-- clear, instead of at its next look (a restarted incarnation may have started before this one stopped). The NOTIFY
-- wakes the tasks listening; the flag taken down with the clear counted wakes, at their next look, the tasks of
-- earlier versions whose NOTIFY is lost (they read the count). :flag and :clears are the quoted names of the table's
-- flag and count, bound as text. Both or neither: where the table has no count, or the role may not add to it
-- (before migration V9), the NOTIFY goes alone.
SELECT pg_notify(:channel, ''),
       CASE WHEN has_sequence_privilege(to_regclass(:clears), 'UPDATE, USAGE')
                 AND has_sequence_privilege(to_regclass(:flag), 'UPDATE')
            THEN setval(to_regclass(:flag), 0, true) + nextval(to_regclass(:clears)) END;

-- name: ReleaseUnknownLeases
-- Rows leased by this incarnation of the task that it does not know it holds: a claim whose commit
-- succeeded while its result was lost with the connection. Given back at once instead of waiting for
-- their leases to expire, with the attempt returned (they never reached Connect), except for the seqs
-- the task passes: rows whose attempt it returned once already keep it, so a batch whose claim keeps
-- losing its result is not claimed again as fresh rows forever but retried one row at a time, counting
-- attempts (the task poisons a row whose count passes outbox.max.attempts this way: it is never read).
-- :keep_attempt are those seqs, :held the rows the task knows it holds. Claims take rows from the head of
-- the line, so the lost rows are among its first :examine rows: only those are read (no index can find a
-- lease owner without making every claim's lease update a non-HOT one), and a recovery after a failure
-- stays cheap however long the line. A lost row further back keeps its lease until it expires.
UPDATE {table} e
   SET lease_owner = NULL, lease_until = NULL,
       attempts = CASE WHEN e.seq = ANY(:keep_attempt::bigint[]) THEN e.attempts ELSE GREATEST(e.attempts - 1, 0) END
 WHERE e.seq = ANY(ARRAY(SELECT w.seq FROM (SELECT seq, lease_owner FROM {table}
                                              WHERE fanned_out_at IS NULL AND poisoned_at IS NULL
                                              ORDER BY seq LIMIT :examine) w
                           WHERE w.lease_owner = :owner AND NOT (w.seq = ANY(:held::bigint[]))))
   AND e.lease_owner = :owner AND e.fanned_out_at IS NULL AND e.poisoned_at IS NULL
RETURNING e.seq, e.attempts;

-- name: Backlog
-- Rows waiting to be fanned out and the age of the oldest one, from the claim's partial index. Rows are
-- counted up to :exact_max only; beyond, the count is PostgreSQL's estimate for the claim's partial index
-- (pg_class.reltuples, which VACUUM and ANALYZE keep), so the probe stays cheap at any backlog. :table is
-- the quoted table name, as text.
SELECT CASE WHEN b.n < :exact_max THEN b.n
            ELSE GREATEST(b.n, (SELECT max(c.reltuples)::bigint
                                  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                                 WHERE i.indrelid = :table::regclass
                                   AND pg_get_expr(i.indpred, i.indrelid) IN
                                       ('((fanned_out_at IS NULL) AND (poisoned_at IS NULL))',
                                        '((poisoned_at IS NULL) AND (fanned_out_at IS NULL))'))) END,
       (SELECT (EXTRACT(EPOCH FROM now() - {col.occurred_at}) * 1000)::bigint FROM {table}
         WHERE fanned_out_at IS NULL AND poisoned_at IS NULL ORDER BY seq LIMIT 1)
  FROM (SELECT count(*) AS n FROM (SELECT 1 FROM {table}
                                    WHERE fanned_out_at IS NULL AND poisoned_at IS NULL LIMIT :exact_max) q) b;

-- name: DeleteRetained
-- Retention: one small batch of fanned rows older than the cutoff. SKIP LOCKED keeps it off rows a
-- claim or stamp holds; poisoned and un-fanned rows are never touched.
DELETE FROM {table}
 WHERE seq = ANY(ARRAY(SELECT seq FROM {table}
                        WHERE fanned_out_at IS NOT NULL
                          AND fanned_out_at < now() - :retention_ms::bigint * interval '1 millisecond'
                          AND poisoned_at IS NULL
                        ORDER BY seq
                        LIMIT :limit
                        FOR UPDATE SKIP LOCKED));

-- name: RelaySessionNames
-- The application names of this database's relay sessions (SharedTableGuard): :prefix is the names' prefix,
-- after which each announces its table, records and connector.
SELECT DISTINCT application_name FROM pg_stat_activity
 WHERE datname = current_database() AND starts_with(application_name, :prefix);

-- name: AdvanceNotifyQueueTail
-- Moves the server's NOTIFY queue tail past what every listener has read and returns how full it is (0 to 1)
-- (NotifyQueue.advanceTail).
SELECT pg_notification_queue_usage();
