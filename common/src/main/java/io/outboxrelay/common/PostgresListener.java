package io.outboxrelay.common;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.core.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A daemon thread that LISTENs on one channel over its own session and calls {@code onNotify} for
 * every batch of notifications. It calls {@code onListening} each time LISTEN is in place, the first
 * time included: notifications sent before (while the task started, or while the session was broken
 * and it reconnected with a doubling delay) were never delivered, so the owner looks for their work.
 */
public final class PostgresListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PostgresListener.class);

    private final ConnectionSettings settings;
    private final String channel;
    private final Runnable onNotify;
    private final Runnable onListening;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread thread;
    private volatile Connection connection;
    private volatile long wakeups;
    private volatile boolean connected;

    public PostgresListener(ConnectionSettings settings, String channel, Runnable onNotify, Runnable onListening,
                            String threadName) {
        this.settings = settings;
        this.channel = channel;
        this.onNotify = onNotify;
        this.onListening = onListening;
        Map<String, String> mdc = MDC.getCopyOfContextMap();
        this.thread = new Thread(() -> {
            if (mdc != null) {
                MDC.setContextMap(mdc);
            }
            run();
        }, threadName);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    public long wakeups() {
        return wakeups;
    }

    public boolean connected() {
        return connected;
    }

    /** The backend pid of the listening session, or -1 while disconnected (tests use it to kill it). */
    public int backendPid() {
        Connection c = connection;
        try {
            return c == null ? -1 : c.unwrap(PGConnection.class).getBackendPID();
        } catch (SQLException e) {
            return -1;
        }
    }

    private void run() {
        long delayMs = 500;
        boolean firstConnect = true;
        while (stopped.getCount() > 0) {
            try (Connection c = PostgresDataSources.open(settings)) {
                connection = c;
                try (Statement st = c.createStatement()) {
                    StringBuilder sql = new StringBuilder("LISTEN ");
                    Utils.escapeIdentifier(sql, channel);
                    st.execute(sql.toString());
                }
                connected = true;
                if (!firstConnect) {
                    log.info("LISTEN {} re-established; sweeping for notifications missed meanwhile", channel);
                }
                firstConnect = false;
                onListening.run();
                delayMs = 500;
                PGConnection pg = c.unwrap(PGConnection.class);
                while (stopped.getCount() > 0) {
                    PGNotification[] batch = pg.getNotifications(500);
                    if (batch != null && batch.length > 0) {
                        wakeups++;
                        onNotify.run();
                    }
                }
            } catch (SQLException e) {
                connected = false;
                if (stopped.getCount() == 0) {
                    return;
                }
                log.warn("LISTEN {} lost ({}; SQLState {}); reconnecting in {} ms. The periodic sweep or scan covers"
                    + " what is written meanwhile.", channel, e.getMessage(), e.getSQLState(), delayMs);
                try {
                    if (stopped.await(delayMs, TimeUnit.MILLISECONDS)) {
                        return;
                    }
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
                delayMs = Math.min(delayMs * 2, 30_000);
            } finally {
                connection = null;
                connected = false;
            }
        }
    }

    @Override
    public void close() {
        stopped.countDown();
        Connection c = connection;
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // closing to unblock the reader; nothing to report
            }
        }
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
