package io.outboxrelay.common;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.core.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A daemon thread that LISTENs on one channel over its own session and calls {@code onNotify} for
 * every batch of notifications that holds one other than an echo (below). It calls {@code onListening}
 * each time LISTEN is in place, the first time included: notifications sent before (while the task
 * started, or while the session was broken and it reconnected with a doubling delay) were never
 * delivered, so the owner looks for their work.
 * A session that only listens sends nothing, so a connection that died without a word (a half-open TCP
 * connection: a firewall dropped it, the server's host vanished) would go unnoticed for as long as TCP
 * keepalive takes, hours on Linux: every {@link #PROBE_INTERVAL_MS}, and at once when the owner asks
 * ({@link #checkAlive}), the thread runs a query that must answer within {@link #PROBE_TIMEOUT_MS}, and
 * reconnects when it does not. The reconnect delay doubles after each lost session, up to 30 s, and goes back to
 * 500 ms after a session that lasted 5 s: a session that keeps failing soon after it opened (an owner's callback
 * that throws now and then, a server that keeps going away) is not opened again twice a second.
 *
 * <p>A session can answer that query and still hear nothing: through PgBouncer in transaction mode, LISTEN runs on
 * whichever server session the pooler lends for it, and a NOTIFY that reaches that server session while it is back
 * in the pool reaches no client. Given another session to send from ({@code echoFrom}), the thread proves that
 * notifications arrive, too: with LISTEN on, at a probe at most once a {@link #PROBE_INTERVAL_MS} per session, it
 * sends a NOTIFY on its channel from that session, with a payload of its own (an echo). When it has not arrived
 * within {@link #PROBE_TIMEOUT_MS}, the thread warns, saying what to set, and sends the next echo only after
 * {@link #DEAF_RECHECK_MS}: it keeps the session, since one opened again through the same pooler would be as deaf.
 * Every listener passes over echoes, its own and other listeners'; none wakes an owner.
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
    private static final String ECHO = SQL.get("Echo");
    /** How an echo's payload starts; {@link #serve} passes over every notification whose payload starts so. */
    public static final String ECHO_PREFIX = "outbox-relay:listen-echo:";
    private static final long FIRST_DELAY_MS = 500;
    /** How long a session must have lasted for the reconnect delay to go back to {@link #FIRST_DELAY_MS}. */
    private static final long LASTED_MS = 5_000;
    /** How long after an echo that did not come back the next one goes (and the warning, if it does not either). */
    static final long DEAF_RECHECK_MS = 600_000;
    /** What covers a session that is lost or hears nothing, in the warnings that say so. */
    private static final String MEANWHILE = "Meanwhile a relay task's looks (250 ms apart at most) or mention"
        + " recovery's periodic scan find what is written; nothing is lost.";

    private final ConnectionSettings settings;
    private final String channel;
    private final Runnable onNotify;
    private final Runnable onListening;
    private final DataSource echoFrom;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread thread;
    private volatile Connection connection;
    private volatile long wakeups;
    private volatile long echoes;
    private volatile boolean connected;
    private volatile boolean probeAsked;
    private volatile boolean hearsNothing;
    /** What the owner asks for: LISTEN on (the default) or off; written under {@link #turn}. */
    private volatile boolean wanted = true;
    /** How many times the owner changed {@link #wanted}; written under {@link #turn}. */
    private volatile long asked;
    /** The last request the current session carries out ({@link #asked} when the thread read it); -1: none yet. */
    private volatile long applied = -1;
    /** Whether LISTEN is in place on the current session. */
    private volatile boolean heard;
    private final Object turn = new Object();
    /** How long the thread waits before it opens a session again (listener thread only; the class comment). */
    private long delayMs = FIRST_DELAY_MS;

    /** How often the listening session proves that it is alive. */
    public static final long PROBE_INTERVAL_MS = 30_000;
    /** How long the probe may take before the session counts as dead and is opened again. */
    public static final int PROBE_TIMEOUT_MS = 5_000;

    /** A listener that proves its session only by a round trip, with no other session to send an echo from. */
    public PostgresListener(ConnectionSettings settings, String channel, Runnable onNotify, Runnable onListening,
                            String threadName) {
        this(settings, channel, onNotify, onListening, threadName, null);
    }

    /** A listener that also proves, with an echo sent from {@code echoFrom} (the owner's pool), that NOTIFYs arrive. */
    public PostgresListener(ConnectionSettings settings, String channel, Runnable onNotify, Runnable onListening,
                            String threadName, DataSource echoFrom) {
        this.settings = settings;
        this.channel = channel;
        this.onNotify = onNotify;
        this.onListening = onListening;
        this.echoFrom = echoFrom;
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

    /** How many echoes came back: the times a session proved that NOTIFYs sent from elsewhere reach it. */
    public long echoes() {
        return echoes;
    }

    /** Whether the last echo did not come back: the session answers but hears no NOTIFY (the class comment). */
    public boolean hearsNothing() {
        return hearsNothing;
    }

    /**
     * The gauge {@code listen-hears-nothing} of a task, relay or mention recovery, whose LISTEN session
     * {@code hearsNothing} reads: 1 while it hears nothing, else 0; {@code setting} is what turns LISTEN off.
     */
    public static TaskMetricsRegistry.Metric hearsNothingMetric(BooleanSupplier hearsNothing, String setting) {
        return new TaskMetricsRegistry.Metric("1 while the task's LISTEN session answers but a NOTIFY the task sent on"
            + " its channel did not reach it (through PgBouncer in transaction mode: set " + setting
            + "; docs/runbook.md), else 0", () -> hearsNothing.getAsBoolean() ? 1 : 0);
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

    /**
     * Asks the thread to prove its session alive now (something suggests a NOTIFY did not arrive). With LISTEN on it
     * also sends an echo, unless one is awaited, the session sent one less than {@link #PROBE_INTERVAL_MS} ago (or
     * {@link #DEAF_RECHECK_MS} after one that did not come back), every session of the pool is taken, or the NOTIFY
     * queue is over half full.
     */
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
        boolean firstConnect = true;
        while (stopped.getCount() > 0) {
            long openedAt = System.nanoTime();
            try (Connection c = PostgresDataSources.open(settings)) {
                connection = c;
                open(c, firstConnect);
                firstConnect = false;
                serve(c);
            } catch (SQLException | RuntimeException e) {
                // a RuntimeException too (an owner's callback that failed): a thread ended by it would be gone for
                // good, without a word, and its owner would wait for NOTIFYs nobody hears
                connected = false;
                if (stopped.getCount() == 0) {
                    return;
                }
                if (System.nanoTime() - openedAt >= LASTED_MS * 1_000_000L) {
                    delayMs = FIRST_DELAY_MS; // it was worth opening
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
        if (e instanceof SQLException sql) {
            log.warn("LISTEN {} lost ({}; SQLState {}); reconnecting in {} ms. " + MEANWHILE, channel, sql.getMessage(),
                sql.getSQLState(), delayMs);
        } else {
            log.warn("LISTEN {} failed ({}); reconnecting in {} ms. " + MEANWHILE + " This is a fault of the connector:"
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

    /** Until the listener stops or the session fails: notifications, LISTEN turned off and on, probes, echoes. */
    private void serve(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        Echo echo = new Echo();
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
                long readFrom = System.nanoTime();
                if (echo.wakes(pg.getNotifications(500))) {
                    wakeups++;
                    onNotify.run();
                }
                echo.check(readFrom);
            } else {
                echo.cancel(); // it cannot arrive with LISTEN off
                awaitTurn(nextProbeAt);
            }
            if (probeAsked || System.nanoTime() - nextProbeAt >= 0) {
                probeAsked = false;
                probe(c);
                if (on && echoFrom != null) {
                    echo.sendIfDue();
                }
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

    /**
     * The echo of one session: a NOTIFY sent from {@link #echoFrom} with a payload of its own, and when it must have
     * arrived. The first one may go as soon as the session opened; then at most one a {@link #PROBE_INTERVAL_MS}, or
     * a {@link #DEAF_RECHECK_MS} after one that did not come back.
     */
    private final class Echo {
        private String awaited;
        /** The last echo that did not come back in time: should it come after all, the session hears. */
        private String missed;
        private long deadline;
        private long nextAt = System.nanoTime();

        /** Whether {@code batch} holds a notification other than an echo; the awaited echo there proves the session. */
        boolean wakes(PGNotification[] batch) {
            if (batch == null) {
                return false;
            }
            boolean wakes = false;
            for (PGNotification n : batch) {
                String payload = n.getParameter();
                if (payload == null || !payload.startsWith(ECHO_PREFIX)) {
                    wakes = true;
                } else if (payload.equals(awaited) || payload.equals(missed)) {
                    awaited = payload.equals(awaited) ? null : awaited;
                    missed = null;
                    echoes++;
                    if (hearsNothing) {
                        hearsNothing = false;
                        log.info("LISTEN {} hears NOTIFYs again", channel);
                    }
                }
            }
            return wakes;
        }

        /**
         * Sends an echo unless one is awaited, the next is not due yet, or every session of the pool is taken (the
         * thread would wait for one instead of reading notifications). The statement has the probe's 5 s; borrowing
         * the session can take longer only when the pool must open one, or another thread took the idle one first
         * (up to the pool's 10 s).
         */
        void sendIfDue() {
            long now = System.nanoTime();
            if (awaited != null || now - nextAt < 0 || exhausted(echoFrom)) {
                return;
            }
            nextAt = now + PROBE_INTERVAL_MS * 1_000_000L; // one that could not be sent waits as long
            String payload = ECHO_PREFIX + UUID.randomUUID();
            try (Connection from = echoFrom.getConnection(); PreparedStatement st = from.prepareStatement(ECHO)) {
                from.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_MS); // the pool puts it back as it was
                st.setString(1, channel);
                st.setString(2, payload);
                try (ResultSet sent = st.executeQuery()) {
                    if (!sent.next()) {
                        return; // the NOTIFY queue is over half full: no echo, as no writer's NOTIFY
                    }
                }
            } catch (SQLException e) {
                // the other session could not send it: that says nothing of this one, whose probe just answered
                log.debug("LISTEN {}: no echo sent ({})", channel, e.getMessage());
                return;
            }
            awaited = payload;
            deadline = System.nanoTime() + PROBE_TIMEOUT_MS * 1_000_000L;
        }

        void cancel() {
            awaited = null;
        }

        /**
         * Once the awaited echo is overdue (the read that began at {@code readFrom}, after its deadline, did not bring
         * it: a thread that paused after a read does not count as a miss): the warning, and the next echo a
         * {@link #DEAF_RECHECK_MS} later.
         */
        void check(long readFrom) {
            if (awaited == null || readFrom - deadline < 0) {
                return;
            }
            long now = System.nanoTime();
            missed = awaited;
            awaited = null;
            hearsNothing = true;
            nextAt = now + DEAF_RECHECK_MS * 1_000_000L;
            log.warn("LISTEN {} hears nothing: a NOTIFY sent on it from another session did not arrive within {} ms."
                + " Through PgBouncer in transaction or statement mode LISTEN cannot work: there set"
                + " outbox.listen.enabled=false (relay) or mentions.notify.channel to empty (mention recovery). "
                + MEANWHILE + " But writers pay for NOTIFYs nobody hears. Checked again in {} min.",
                channel, PROBE_TIMEOUT_MS, DEAF_RECHECK_MS / 60_000);
        }
    }

    /** Whether every session {@code source} may hold is taken (a Hikari pool; any other source: never). */
    private static boolean exhausted(DataSource source) {
        HikariPoolMXBean sessions = source instanceof HikariDataSource pool ? pool.getHikariPoolMXBean() : null;
        return sessions != null && sessions.getIdleConnections() == 0
            && sessions.getTotalConnections() >= ((HikariDataSource) source).getMaximumPoolSize();
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
