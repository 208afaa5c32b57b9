package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

/**
 * Everything a relay task does to the outbox table, one method per row-state edge (docs/row-lifecycle.md):
 * claim, stamp, release, poison, extend, take back; plus the table-wide reads of housekeeping. The
 * PostgreSQL implementation is {@link JdbcOutboxStore}; unit tests of the relay loop use an in-memory one.
 */
interface OutboxStore {
    /** This incarnation's lease owner, {@code <connector>-<task>#<incarnation>}. */
    String owner();

    /**
     * pending -> leased: the rows first in line, up to {@code limit}; a row attempted before comes alone
     * when it is first in line and otherwise ends the batch. Rows an earlier incarnation of this task leased
     * before this one started are in line too. The lease commits.
     */
    Claim claim(int limit) throws SQLException;

    /** leased -> fanned out, with the receipt NOTIFY in the same transaction; returns how many rows it stamped. */
    int stamp(List<Stamp> rows) throws SQLException;

    /** leased -> pending: the lease cleared, the attempt returned or not, the next claim delayed or not. */
    void release(List<Release> rows) throws SQLException;

    /** pending or leased -> poisoned; returns the rows this call poisoned. */
    List<PoisonedRow> poison(List<Poison> rows) throws SQLException;

    /** Sends a NOTIFY on {@code channel}: rows given back are claimable, and every task listening claims at once. */
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

    /** Why this connector must not relay the table (another running connector serves other subscriptions), or null. */
    String tableShareConflict() throws SQLException;

    /**
     * The table's wake-up flag, or null when the table has none (an older outbox.sql: a NOTIFY per insert).
     *
     * @param notifyChannel the channel the table's trigger notifies, for the NOTIFY a task sends itself
     */
    WakeupCycle.Flag wakeupFlag(String notifyChannel) throws SQLException;

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

    /** A row to poison, with the reason operators read in {@code last_error}. */
    record Poison(long seq, String reason) {
    }

    /** A row {@link #takeBackUnknownLeases} gave back, with its attempts after that. */
    record TakenBack(long seq, int attempts) {
    }

    /** Rows waiting (capped count) and the age of the oldest in ms (0 when none). */
    record Backlog(long rows, long oldestAgeMs) {
    }
}
