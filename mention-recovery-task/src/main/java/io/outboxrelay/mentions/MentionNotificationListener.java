package io.outboxrelay.mentions;

import io.outboxrelay.common.Backoff;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.Identifiers;
import io.outboxrelay.common.PostgresDataSources;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Holds {@code LISTEN <mentions.notify.channel>} on a dedicated (unpooled) session in a daemon thread
 * and turns every notification into a {@link ScanTrigger.Kind#NOTIFY} pass request. A lost session is
 * reopened with backoff; after a reconnect it also requests a pass, since a NOTIFY sent meanwhile
 * was lost. The periodic scan covers whatever still slips through.
 */
final class MentionNotificationListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MentionNotificationListener.class);
    private static final int RECEIVE_TIMEOUT_MS = 500;

    private final ConnectionSettings settings;
    private final String channel;
    private final ScanTrigger trigger;
    private final CountDownLatch closed = new CountDownLatch(1);
    private final Backoff backoff = new Backoff();
    private Thread thread;

    MentionNotificationListener(ConnectionSettings settings, String channel, ScanTrigger trigger) {
        this.settings = settings;
        this.channel = channel;
        this.trigger = trigger;
    }

    /** Starts the thread, which carries the caller's MDC (Connect's task identity) into its logs. */
    void start() {
        Map<String, String> mdc = MDC.getCopyOfContextMap();
        thread = new Thread(() -> {
            if (mdc != null) {
                MDC.setContextMap(mdc);
            }
            run();
        }, "outbox-relay-mentions-listener");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        boolean connectedBefore = false;
        while (!isClosed()) {
            try (Connection c = PostgresDataSources.open(settings)) {
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN " + Identifiers.quoteQualified(channel));
                }
                log.info("Mention recovery listening on channel {}{}", channel,
                    connectedBefore ? " again; scanning for mentions whose NOTIFY was lost" : "");
                if (connectedBefore) {
                    trigger.request(ScanTrigger.Kind.NOTIFY);
                }
                connectedBefore = true;
                backoff.reset();
                receive(c.unwrap(PGConnection.class));
            } catch (SQLException e) {
                if (isClosed()) {
                    return;
                }
                long delay = backoff.nextDelayMs();
                log.warn("{}; reconnecting in {} ms (periodic scans continue)",
                    MentionErrors.describe("LISTEN " + channel, e), delay);
                try {
                    closed.await(delay, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void receive(PGConnection pg) throws SQLException {
        while (!isClosed()) {
            PGNotification[] notifications = pg.getNotifications(RECEIVE_TIMEOUT_MS);
            if (notifications != null && notifications.length > 0) {
                log.debug("Mention recovery received {} notification(s) on {}", notifications.length, channel);
                trigger.request(ScanTrigger.Kind.NOTIFY);
            }
        }
    }

    private boolean isClosed() {
        return closed.getCount() == 0;
    }

    /** Stops the thread; returns within about a second even if the database is unresponsive. */
    @Override
    public void close() {
        closed.countDown();
        Thread t = thread;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(RECEIVE_TIMEOUT_MS * 2L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
