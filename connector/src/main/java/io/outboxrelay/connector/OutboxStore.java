package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;

/**
 * Everything a relay task does to the outbox table, one method per row-state edge (docs/row-lifecycle.md):
 * claim, stamp, release, poison, extend, take back; plus the table-wide reads of housekeeping. The
 * PostgreSQL implementation is {@link JdbcOutboxStore}; unit tests of the relay loop use an in-memory one.
 */
interface OutboxStore {
    /** This incarnation's lease owner, {@code <connector>-<task>#<incarnation>}. */
    String owner();

    /**
     * A task's pass in one statement: leased -> fanned out for the acknowledged rows (with the receipt NOTIFY in
     * the same transaction), then pending -> leased for the rows first in line, up to the pass's limit (a row
     * attempted before comes alone when it is first in line and otherwise ends the batch; rows an earlier
     * incarnation of this task leased before this one started are in line too). Everything commits together.
     */
    PassResult pass(Pass pass) throws SQLException;

    /** A claim alone. */
    default Claim claim(int limit) throws SQLException {
        return pass(new Pass(List.of(), limit)).claim();
    }

    /** A stamp alone; returns how many rows it stamped. */
    default int stamp(List<Stamp> rows) throws SQLException {
        return pass(new Pass(rows, 0)).stamped();
    }

    /** leased -> pending: the lease cleared, the attempt returned or not, the next claim delayed or not. */
    void release(List<Release> rows) throws SQLException;

    /**
     * At a stop with connector-defined transaction boundaries: rows this incarnation leases keep their lease and
     * get their attempt back (docs/exactly-once.md, 3.7).
     */
    void returnAttempts(Collection<Long> seqs) throws SQLException;

    /**
     * leased by {@code owner} -> fanned out, without producing: the rows of this task's share that a committed
     * source offset of {@code owner} names and that it still leases un-fanned and not poisoned (their records are
     * in Kafka, only the stamp is missing), with {@code fanoutOfType.apply(type)} as their {@code fanout}, and
     * their write receipts (docs/exactly-once.md, 3.5).
     */
    Recovered stampRecovered(String owner, long[] seqs, Function<String, String> fanoutOfType) throws SQLException;

    /** pending or leased -> poisoned; returns the rows this call poisoned. */
    List<PoisonedRow> poison(List<Poison> rows) throws SQLException;

    /**
     * A stopping task left rows to the others: every task of the table claims at once, as after a writer's clear (a
     * NOTIFY on {@code channel}, and, where the role may count it, the wake-up flag taken down with the clear counted,
     * for a task whose NOTIFY is lost).
     */
    void wake(String channel) throws SQLException;

    /** leased -> leased: renews the leases of rows this incarnation holds. */
    void extend(Collection<Long> seqs) throws SQLException;

    /**
     * leased by this incarnation, but not in {@code held} -> pending: rows of a claim whose result was
     * lost with the connection. Their attempt is returned, except for the rows in {@code keepAttempt}.
     */
    List<TakenBack> takeBackUnknownLeases(Collection<Long> held, Collection<Long> keepAttempt) throws SQLException;

    /** Rows waiting to be fanned out, and the age of the oldest (table-wide). */
    Backlog backlog() throws SQLException;

    /** Deletes up to {@code limit} fanned rows older than {@code retentionMs}; returns how many. */
    int deleteRetained(long retentionMs, int limit) throws SQLException;

    /**
     * The upkeep of a table partitioned by day with migration V5 (partitions ahead, retention by partition);
     * null for a plain table.
     */
    default PartitionUpkeep partitions() throws SQLException {
        return null;
    }

    /** Why this connector must not relay the table (another running connector serves other subscriptions), or null. */
    String tableShareConflict() throws SQLException;

    /** The table's wake-up flag, or null when the table has none (an older outbox.sql: a NOTIFY per insert). */
    ClaimPacer.Flag wakeupFlag() throws SQLException;

    /** What a pass writes and asks: the acknowledged rows to stamp, and how many rows to claim (0: none). */
    record Pass(List<Stamp> stamps, int limit) {
    }

    /** What a pass did: rows stamped, and the claim. */
    record PassResult(int stamped, Claim claim) {
    }

    /**
     * What a claim leased, in seq order, and how many rows it found in line: as many as it asked for when
     * more may wait; more than it leased when a row attempted before ended the batch.
     */
    record Claim(List<ClaimedRow> rows, int found) {
        static final Claim NONE = new Claim(List.of(), 0);

        /** Whether the claim found as many rows in line as it asked for: the backlog may be larger. */
        boolean full(int limit) {
            return found >= limit;
        }

        /** Whether rows may wait in line that this claim did not lease: claim again at once. */
        boolean more(int limit) {
            return full(limit) || rows.size() < found;
        }

        /** Whether this claim retries a row attempted before (such a row is claimed alone). */
        boolean retry() {
            return !rows.isEmpty() && rows.get(0).attempts() > 1;
        }
    }

    /** An acknowledged row to stamp: its {@code fanout} object and its event id (for the receipt). */
    record Stamp(long seq, String fanout, String id) {
    }

    /**
     * A row to give back: {@code returnAttempt} when none of its records failed the task, {@code delayMs}
     * before the next claim (0: at once) and the error to keep in {@code last_error} (null: keep the old).
     */
    record Release(long seq, boolean returnAttempt, long delayMs, String error) {
        static Release now(long seq, boolean returnAttempt) {
            return new Release(seq, returnAttempt, 0, null);
        }
    }

    /**
     * A row to poison, with the reason operators read in {@code last_error}, and its {@code attempts} as this task
     * last saw them (its claim, or its give-back of a lost claim): a row whose count moved since (another claimer
     * claimed it after this task's lease ran out, an operator requeued it) is no longer this task's to poison.
     */
    record Poison(long seq, String reason, int attempts) {
    }

    /** A row {@link #takeBackUnknownLeases} gave back, with its attempts after that. */
    record TakenBack(long seq, int attempts) {
    }

    /**
     * What a reconciliation stamp found among the named rows of this task's share: how many it stamped, how
     * many were stamped already, and the seqs neither stamped nor leased by the owner (requeued, released,
     * claimed by another connector, or rows of a table created again).
     */
    record Recovered(int stamped, int alreadyStamped, List<Long> notLeased) {
    }

    /** Rows waiting (capped count) and the age of the oldest in ms (0 when none). */
    record Backlog(long rows, long oldestAgeMs) {
    }
}
