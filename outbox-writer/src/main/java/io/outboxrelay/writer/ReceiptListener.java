package io.outboxrelay.writer;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.core.Utils;

/**
 * The receipt channel's listener: owns one session that LISTENs on the channel, parses each
 * notification's comma-separated event ids, reads the stamps of the awaited ones on the same session
 * and completes their waiters. When the session breaks it reconnects with a doubling delay (0.5 s to
 * 30 s) and then asks the fallback to read every pending id at once, since notifications sent while
 * disconnected are gone. {@link #close} aborts the session, so the thread ends at once.
 */
final class ReceiptListener implements Runnable {
    private static final System.Logger LOG = System.getLogger(ReceiptListener.class.getName());
    private static final int POLL_MS = 500;
    private static final long MAX_DELAY_MS = 30_000;

    private final ConnectionSource connections;
    private final String channel;
    private final ReceiptReader reader;
    private final ReceiptWaiters waiters;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile Connection session;
    private volatile boolean listening;

    ReceiptListener(ConnectionSource connections, String channel, ReceiptReader reader, ReceiptWaiters waiters) {
        this.connections = connections;
        this.channel = channel;
        this.reader = reader;
        this.waiters = waiters;
    }

    /** Opens the first session on the caller's thread, so wrong settings fail at start, not later. */
    void connect() throws SQLException {
        session = openAndListen();
        listening = true;
        LOG.log(Level.INFO, "Listening for fan-out receipts on channel {0}", channel);
    }

    boolean listening() {
        return listening;
    }

    /** The backend pid of the listening session, or -1 while disconnected. */
    int backendPid() {
        Connection c = session;
        try {
            return c == null ? -1 : c.unwrap(PGConnection.class).getBackendPID();
        } catch (SQLException e) {
            return -1;
        }
    }

    @Override
    public void run() {
        long delayMs = 500;
        while (stopped.getCount() > 0) {
            Connection c = session;
            try {
                if (c == null) {
                    c = openAndListen();
                    session = c;
                    listening = true;
                    delayMs = 500;
                    LOG.log(Level.INFO, "LISTEN {0} re-established; reading every pending receipt from the table,"
                        + " as notifications sent meanwhile are lost", channel);
                    waiters.checkAllNow();
                }
                pump(c);
            } catch (SQLException e) {
                if (stopped.getCount() == 0) {
                    break;
                }
                LOG.log(Level.WARNING, "Receipt channel {0} lost ({1}; SQLState {2}); reconnecting in {3} ms. {4}"
                    + " pending receipt(s) are read from the table meanwhile.",
                    channel, e.getMessage(), e.getSQLState(), delayMs, waiters.size());
            } finally {
                listening = false;
                session = null;
                closeQuietly(c);
            }
            try {
                if (stopped.await(delayMs, TimeUnit.MILLISECONDS)) {
                    break;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            delayMs = Math.min(delayMs * 2, MAX_DELAY_MS);
        }
    }

    private void pump(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        while (stopped.getCount() > 0) {
            PGNotification[] batch = pg.getNotifications(POLL_MS);
            if (batch == null || batch.length == 0) {
                continue;
            }
            List<UUID> awaited = waiters.noteNotified(parseIds(batch));
            if (!awaited.isEmpty()) {
                waiters.complete(reader.read(c, awaited), true);
            }
        }
    }

    private List<UUID> parseIds(PGNotification[] batch) {
        List<UUID> ids = new ArrayList<>();
        int malformed = 0;
        for (PGNotification n : batch) {
            String payload = n.getParameter();
            if (!channel.equals(n.getName()) || payload == null || payload.isEmpty()) {
                continue;
            }
            for (String token : payload.split(",")) {
                try {
                    ids.add(UUID.fromString(token.trim()));
                } catch (IllegalArgumentException e) {
                    malformed++;
                }
            }
        }
        if (malformed > 0) {
            LOG.log(Level.DEBUG, "Ignored {0} token(s) that are not event ids on channel {1}", malformed, channel);
        }
        return ids;
    }

    private Connection openAndListen() throws SQLException {
        Connection c = connections.open();
        try {
            c.setAutoCommit(true); // LISTEN inside an open transaction would only start at its commit
            StringBuilder sql = new StringBuilder("LISTEN ");
            Utils.escapeIdentifier(sql, channel);
            try (Statement st = c.createStatement()) {
                st.execute(sql.toString());
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    /** Stops the loop and aborts the session so a blocked read returns at once. */
    void close() {
        stopped.countDown();
        Connection c = session;
        if (c != null) {
            try {
                c.abort(Runnable::run);
            } catch (SQLException | RuntimeException ignored) {
                // the session is already gone; the loop ends on its own within POLL_MS
            }
        }
    }

    /** Closes the first session when the thread never started. */
    void closeUnstarted() {
        closeQuietly(session);
        session = null;
        listening = false;
    }

    private static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // the session is broken; nothing else to release
            }
        }
    }
}
