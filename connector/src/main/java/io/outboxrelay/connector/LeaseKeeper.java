package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of every row a task holds: extended every third of {@code outbox.lease.ms}, first
 * thing in a pass and also while the task backs off, so that another claimer never takes a row this task
 * will still stamp.
 */
final class LeaseKeeper {
    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);
    /** The shortest period between extensions, whatever the lease: a very short lease is not extended in a loop. */
    static final long MIN_PERIOD_MS = 500;
    /** How soon an extension that failed while the task backs off is tried again (or a period, if shorter). */
    static final long RETRY_WHILE_BACKING_OFF_MS = 1_000;

    private final OutboxStore store;
    private final HeldRows held;
    private final long periodMs;
    private long nextExtensionAt;

    LeaseKeeper(OutboxStore store, HeldRows held, long leaseMs, long now) {
        this.store = store;
        this.held = held;
        this.periodMs = Math.max(MIN_PERIOD_MS, leaseMs / 3);
        this.nextExtensionAt = now + periodMs;
    }

    /** Extends the held rows' leases when a period has passed. */
    void maybeExtend(long now) throws SQLException {
        if (now < nextExtensionAt) {
            return;
        }
        nextExtensionAt = now + periodMs;
        List<Long> seqs = held.seqs();
        if (!seqs.isEmpty()) {
            store.extend(seqs);
        }
    }

    /**
     * A backoff may outlast the lease (its cap is not tied to it), so leases are kept through it too. A
     * failure here only logs; the backoff goes on and the extension is tried again within a second.
     */
    void maybeExtendWhileBackingOff(long now) {
        try {
            maybeExtend(now);
        } catch (SQLException e) {
            nextExtensionAt = now + Math.min(RETRY_WHILE_BACKING_OFF_MS, periodMs);
            log.debug("Lease extension during backoff failed: {} (SQLState {})", e.getMessage(), e.getSQLState());
        }
    }

    /**
     * A pass failed: it may have been the extension, or kept it from running. Extend on the next pass
     * that works rather than a whole period later, when leases of rows in flight may have lapsed.
     */
    void passFailed() {
        nextExtensionAt = 0;
    }
}
