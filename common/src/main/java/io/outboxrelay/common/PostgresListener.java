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
 * A session that only listens sends nothing, so a connection that died without a word (a half-open TCP
 * connection: a firewall dropped it, the server's host vanished) would go unnoticed for as long as TCP
 * keepalive takes, hours on Linux: every {@link #PROBE_INTERVAL_MS}, and at once when the owner asks
 * ({@link #checkAlive}), the thread runs a query that must answer within {@link #PROBE_TIMEOUT_MS}, and
 * reconnects when it does not.
 *
 * <p>The owner may turn LISTEN off and on again ({@link #listen}): PostgreSQL wakes every session that listens in a
 * database for each NOTIFY sent there, whatever its channel (write receipts, other tasks' wake-ups, the
 * application's own), so an owner that has no use for notifications for a while (a relay task busy claiming on
 * its pace) spares the server those wake-ups. Turned on again this way, LISTEN is not reported to
 * {@code onListening}: the owner chose not to hear meanwhile. A session opened again while LISTEN is off stays
 * off.
 */
public final class PostgresListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PostgresListener.class);
    private static final NamedSql SQL = NamedSql.load(PostgresListener.class, "listener.sql");
    private static final String PROBE = SQL.get("Probe");

    private final ConnectionSettings settings;
    private final String channel;
    private final Runnable onNotify;
    private final Runnable onListening;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread thread;
    private volatile Connection connection;
    private volatile long wakeups;
    private volatile boolean connected;
    private volatile boolean probeAsked;
    /** What the owner asks for: LISTEN on (the default) or off; written under {@link #turn}. */
    private volatile boolean wanted = true;
    /** How many times the owner changed {@link #wanted}; written under {@link #turn}. */
    private volatile long asked;
    /** The last request the current session carries out ({@link #asked} when the thread read it); -1: none yet. */
    private volatile long applied = -1;
    /** Whether LISTEN is in place on the current session. */
    private volatile boolean heard;
    private final Object turn = new Object();

    /** How often the listening session proves that it is alive. */
    public static final long PROBE_INTERVAL_MS = 30_000;
    /** How long the probe may take before the session counts as dead and is opened again. */
    public static final int PROBE_TIMEOUT_MS = 5_000;

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

    /** Asks the thread to prove its session alive now (something suggests a NOTIFY did not arrive). */
    public void checkAlive() {
        probeAsked = true;
        synchronized (turn) {
            turn.notifyAll();
        }
    }

    /** Asks for LISTEN on or off; the thread makes the change soon after (at once when turning it on). */
    public void listen(boolean on) {
        synchronized (turn) {
            if (wanted != on) {
                wanted = on;
                asked++;
                turn.notifyAll();
            }
        }
    }

    /**
     * Whether the session is up and has not yet carried out the owner's last request: it is opening, or a LISTEN or
     * UNLISTEN is still to run or running (one asked for before may still be running when the owner asks the
     * opposite: comparing the session's state with the request would say "done" too early). A session that is down
     * is not changing: it opens with the asked state, and tells the owner when that is LISTEN.
     */
    public boolean changing() {
        return connected && applied != asked;
    }

    private void run() {
        long delayMs = 500;
        boolean firstConnect = true;
        while (stopped.getCount() > 0) {
            try (Connection c = PostgresDataSources.open(settings)) {
                connection = c;
                open(c, firstConnect);
                firstConnect = false;
                delayMs = 500;
                serve(c);
            } catch (SQLException | RuntimeException e) {
                // a RuntimeException too (an owner's callback that failed): a thread ended by it would be gone for
                // good, without a word, and its owner would wait for NOTIFYs nobody hears
                connected = false;
                if (stopped.getCount() == 0) {
                    return;
                }
                lost(e, delayMs);
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
                heard = false;
                applied = -1;
            }
        }
    }

    /** The session is gone and opens again after {@code delayMs}; a RuntimeException is logged with its stack trace. */
    private void lost(Exception e, long delayMs) {
        String meanwhile = " Meanwhile a relay task's looks (250 ms apart at most) or mention recovery's periodic scan"
            + " find what is written; nothing is lost.";
        if (e instanceof SQLException sql) {
            log.warn("LISTEN {} lost ({}; SQLState {}); reconnecting in {} ms." + meanwhile, channel, sql.getMessage(),
                sql.getSQLState(), delayMs);
        } else {
            log.warn("LISTEN {} failed ({}); reconnecting in {} ms." + meanwhile + " This is a fault of the connector:"
                + " please report it with this stack trace.", channel, e, delayMs, e);
        }
    }

    /**
     * A session just opened: LISTEN unless the owner turned it off, and tell the owner it is in place. It counts as
     * connected (and so changing, until the request it read is carried out) before it reads the request: a request
     * made meanwhile is then waited for, never taken as done.
     */
    private void open(Connection c, boolean firstConnect) throws SQLException {
        long request;
        boolean on;
        synchronized (turn) {
            connected = true;
            request = asked;
            on = wanted;
        }
        if (on) {
            timed(c, listenSql()); // bound like the probe: the owner may be waiting for it before it arms
        }
        heard = on;
        applied = request;
        if (on) {
            if (!firstConnect) {
                log.info("LISTEN {} re-established; sweeping for notifications missed meanwhile", channel);
            }
            onListening.run();
        }
    }

    /** Until the listener stops or the session fails: notifications, LISTEN turned off and on, probes. */
    private void serve(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        long nextProbeAt = System.nanoTime() + PROBE_INTERVAL_MS * 1_000_000L;
        while (stopped.getCount() > 0) {
            long request;
            boolean on;
            synchronized (turn) {
                request = asked;
                on = wanted;
            }
            if (on != heard) {
                timed(c, on ? listenSql() : unlistenSql());
                heard = on;
            }
            applied = request;
            if (on) {
                PGNotification[] batch = pg.getNotifications(500);
                if (batch != null && batch.length > 0) {
                    wakeups++;
                    onNotify.run();
                }
            } else {
                awaitTurn(nextProbeAt);
            }
            if (probeAsked || System.nanoTime() - nextProbeAt >= 0) {
                probeAsked = false;
                probe(c);
                nextProbeAt = System.nanoTime() + PROBE_INTERVAL_MS * 1_000_000L;
            }
        }
    }

    /**
     * While LISTEN is off nothing arrives on the session: the thread waits until the owner asks for LISTEN again,
     * the owner asks for a probe, the next probe is due or the listener stops.
     */
    private void awaitTurn(long nextProbeAt) {
        synchronized (turn) {
            long waitMs = Math.min(500, (nextProbeAt - System.nanoTime()) / 1_000_000);
            if (!wanted && !probeAsked && waitMs > 0 && stopped.getCount() > 0) {
                try {
                    turn.wait(waitMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    stopped.countDown();
                }
            }
        }
    }

    /** LISTEN on the channel, quoted as an identifier. */
    private String listenSql() throws SQLException {
        return onChannel("Listen");
    }

    /** UNLISTEN the channel, quoted as an identifier. */
    private String unlistenSql() throws SQLException {
        return onChannel("Unlisten");
    }

    private String onChannel(String statement) throws SQLException {
        String quoted = Utils.escapeIdentifier(new StringBuilder(), channel).toString();
        return SQL.bindable(statement, "", text -> text.replace("{channel}", quoted)).sql();
    }

    /** A round trip that must come back in time; a session that died unseen throws here instead of hanging. */
    private static void probe(Connection c) throws SQLException {
        timed(c, PROBE);
    }

    /** {@code sql}, which must answer within {@link #PROBE_TIMEOUT_MS} or the session counts as dead. */
    private static void timed(Connection c, String sql) throws SQLException {
        int before = c.getNetworkTimeout();
        c.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_MS);
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        } finally {
            c.setNetworkTimeout(Runnable::run, before);
        }
    }

    @Override
    public void close() {
        stopped.countDown();
        synchronized (turn) {
            turn.notifyAll();
        }
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
