package io.outboxrelay.writer;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * The fallback that keeps a lost notification from hanging a writer: each pending id is read from the
 * table ({@code fanned_out_at}) once per fallback interval after it was registered, all due ids in
 * one query on a short-lived connection. In the fault-free case the notification wins and no read
 * runs. Failures are logged once per streak (WARNING), then retried every interval.
 */
final class FallbackChecker implements Runnable {
    private static final System.Logger LOG = System.getLogger(FallbackChecker.class.getName());

    private final ConnectionSource connections;
    private final ReceiptReader reader;
    private final ReceiptWaiters waiters;
    private volatile boolean stopped;
    private volatile Connection inFlight;

    FallbackChecker(ConnectionSource connections, ReceiptReader reader, ReceiptWaiters waiters) {
        this.connections = connections;
        this.reader = reader;
        this.waiters = waiters;
    }

    @Override
    public void run() {
        boolean failing = false;
        while (!stopped) {
            List<UUID> due = waiters.takeDue(System.nanoTime());
            if (!due.isEmpty()) {
                failing = check(due, failing);
            }
            try {
                waiters.awaitNextDue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Reads the due ids and completes the stamped ones; returns whether the read failed. */
    private boolean check(List<UUID> due, boolean failing) {
        try (Connection c = connections.open()) {
            inFlight = c;
            List<ReceiptReader.Stamp> stamps = reader.read(c, due);
            waiters.complete(stamps, false);
            if (failing) {
                LOG.log(Level.INFO, "Fallback receipt reads work again");
            }
            if (!stamps.isEmpty()) {
                LOG.log(Level.DEBUG, "Fallback read found {0} of {1} awaited receipt(s) without their notification",
                    stamps.size(), due.size());
            }
            return false;
        } catch (SQLException e) {
            if (!stopped) {
                LOG.log(failing ? Level.DEBUG : Level.WARNING, "Fallback read of {0} awaited receipt(s) failed ({1};"
                    + " SQLState {2}); retrying every interval until the waits time out",
                    due.size(), e.getMessage(), e.getSQLState());
            }
            return true;
        } finally {
            inFlight = null;
        }
    }

    /** Stops the loop; aborts a read in flight so the thread ends at once. */
    void close() {
        stopped = true;
        waiters.wake();
        Connection c = inFlight;
        if (c != null) {
            try {
                c.abort(Runnable::run);
            } catch (SQLException | RuntimeException ignored) {
                // already closed
            }
        }
    }
}
