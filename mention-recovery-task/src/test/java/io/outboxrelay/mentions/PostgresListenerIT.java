package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.PostgresDataSources;
import io.outboxrelay.common.PostgresListener;
import io.outboxrelay.testsupport.CuttingProxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shared LISTEN thread (common's PostgresListener, tested here where a real server is at hand): it
 * tells its owner each time LISTEN is in place, the first time included, because a notification sent
 * before that (while the task was starting, or while the session was being re-established) reached no
 * one. The mention task asks for a pass then, the relay for a claim.
 */
class PostgresListenerIT {
    private static PostgresFixture pg;
    private static String url;

    @BeforeAll
    static void start() throws Exception {
        pg = new PostgresFixture();
        url = pg.createDatabase();
    }

    @AfterAll
    static void stop() throws Exception {
        pg.close();
    }

    /** A listener on {@code channel} that counts into the two counters, started and listening. */
    private static PostgresListener started(String channel, AtomicInteger notified, AtomicInteger listening) {
        return started(url, channel, notified, listening);
    }

    /** The settings of a session to the database at {@code jdbcUrl}, named {@code name}. */
    private static ConnectionSettings settings(String jdbcUrl, String name) {
        return new ConnectionSettings(jdbcUrl, "postgres", "postgres", null, 30_000, 60_000, 60_000, "off", name);
    }

    /** The same, over {@code jdbcUrl} (a proxy's). */
    private static PostgresListener started(String jdbcUrl, String channel, AtomicInteger notified,
                                            AtomicInteger listening) {
        ConnectionSettings settings = settings(jdbcUrl, channel.replace('_', '-'));
        PostgresListener listener = new PostgresListener(settings, channel, notified::incrementAndGet,
            listening::incrementAndGet, channel.replace('_', '-'));
        listener.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> listening.get() == 1);
        return listener;
    }

    @Test
    void theOwnerHearsWhenListenIsInPlaceAtStartAndAfterEveryReconnectAndHearsEveryNotify() throws Exception {
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        try (PostgresListener listener = started("listener_it", notified, listening);
             Connection owner = pg.owner(url)) {
            assertThat(notified).as("no notification was sent yet").hasValue(0);

            owner.createStatement().execute("SELECT pg_notify('listener_it', '')");
            await().atMost(Duration.ofSeconds(10)).until(() -> notified.get() == 1);

            int pid = listener.backendPid();
            owner.createStatement().execute("SELECT pg_terminate_backend(" + pid + ")");
            await().atMost(Duration.ofSeconds(30)).until(() -> listening.get() == 2);
            assertThat(listener.backendPid()).isNotEqualTo(pid);
            assertThat(notified).as("a reconnect is not a notification").hasValue(1);
        }
    }

    /**
     * An owner's callback that throws (a bug, or a runtime failure inside it) must not end the LISTEN thread without
     * a word: the thread would be gone for good, the owner would keep arming for NOTIFYs nobody hears. The listener
     * reconnects, tells the owner LISTEN is in place again, and the next NOTIFY arrives.
     */
    @Test
    void aCallbackThatThrowsDoesNotEndTheListener() throws Exception {
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        ConnectionSettings settings = settings(url, "listener-throws");
        Runnable throwsOnce = () -> {
            if (notified.incrementAndGet() == 1) {
                throw new IllegalStateException("the owner's callback failed");
            }
        };
        try (PostgresListener listener = new PostgresListener(settings, "listener_throws", throwsOnce,
                listening::incrementAndGet, "listener-throws");
             Connection owner = pg.owner(url)) {
            listener.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> listening.get() == 1);
            owner.createStatement().execute("SELECT pg_notify('listener_throws', '')");
            await().atMost(Duration.ofSeconds(10)).until(() -> notified.get() == 1);

            await().atMost(Duration.ofSeconds(30)).until(() -> listening.get() == 2);
            owner.createStatement().execute("SELECT pg_notify('listener_throws', '')");
            await().atMost(Duration.ofSeconds(10)).until(() -> notified.get() == 2);
        }
    }

    /**
     * A callback that fails on every NOTIFY, and NOTIFYs that keep coming: each session fails soon after it opened, so
     * the listener waits twice as long each time before it opens the next (500 ms, 1 s, 2 s, 4 s), instead of going
     * back to 500 ms because the session had opened. The third wait is measured from the NOTIFY that failed the
     * session: before, it was 500 ms. Only a session that lasted 5 s resets the wait: the fifth, which lasts that
     * long, is followed after 500 ms, not 8 s.
     */
    @Test
    void sessionsThatFailSoonAfterOpeningAreOpenedAgainEachTimeLaterNotTwiceASecond() throws Exception {
        AtomicInteger listening = new AtomicInteger();
        ConnectionSettings settings = settings(url, "listener-backoff");
        Runnable alwaysThrows = () -> {
            throw new IllegalStateException("the owner's callback failed");
        };
        try (PostgresListener listener = new PostgresListener(settings, "listener_backoff", alwaysThrows,
                listening::incrementAndGet, "listener-backoff");
             Connection owner = pg.owner(url)) {
            listener.start();
            long sentAt = 0;
            for (int session = 1; session <= 3; session++) {
                int opened = session;
                await().atMost(Duration.ofSeconds(30)).until(() -> listening.get() == opened);
                sentAt = System.nanoTime();
                owner.createStatement().execute("SELECT pg_notify('listener_backoff', '')");
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> listening.get() == 4);
            assertThat(Duration.ofNanos(System.nanoTime() - sentAt)).as("the third wait: 2 s")
                .isGreaterThanOrEqualTo(Duration.ofMillis(1_900));
            owner.createStatement().execute("SELECT pg_notify('listener_backoff', '')");
            await().atMost(Duration.ofSeconds(30)).until(() -> listening.get() == 5);

            await("the fifth session lasts 5 s").during(Duration.ofMillis(5_500)).atMost(Duration.ofSeconds(10))
                .until(() -> listening.get() == 5);
            owner.createStatement().execute("SELECT pg_notify('listener_backoff', '')");
            await("opened again after 500 ms, not 8 s").atMost(Duration.ofSeconds(5))
                .until(() -> listening.get() == 6);
        }
    }

    /**
     * A listener given its owner's pool proves that NOTIFYs reach its session: asked to prove itself, it sends one on
     * its channel from the pool, with a payload of its own, and it arrives. An echo wakes no owner, neither the
     * sender's nor another listener's on the same channel, and a second ask within the probe interval sends none.
     * The control that both owners would hear a NOTIFY: a writer's arrives at both.
     */
    @Test
    void anEchoFromThePoolArrivesAndWakesNoOwner() throws Exception {
        ConnectionSettings settings = settings(url, "listener-echo");
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        AtomicInteger otherNotified = new AtomicInteger();
        try (HikariDataSource pool = PostgresDataSources.pool(settings, 2, "listener-echo");
             PostgresListener listener = new PostgresListener(settings, "listener_echo", notified::incrementAndGet,
                 listening::incrementAndGet, "listener-echo", pool);
             PostgresListener other = started("listener_echo", otherNotified, new AtomicInteger());
             Connection owner = pg.owner(url)) {
            listener.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> listening.get() == 1);

            listener.checkAlive();
            await().atMost(Duration.ofSeconds(10)).until(() -> listener.echoes() == 1);
            listener.checkAlive();
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(6))
                .until(() -> listener.echoes() == 1 && notified.get() == 0 && otherNotified.get() == 0);
            assertThat(listening).as("the session proved itself: kept").hasValue(1);

            owner.createStatement().execute("SELECT pg_notify('listener_echo', '')");
            await().atMost(Duration.ofSeconds(10)).until(() -> notified.get() == 1 && otherNotified.get() == 1);
            // an echo and a writer's NOTIFY in one transaction arrive in one batch: the writer's still wakes
            owner.createStatement().execute("SELECT pg_notify('listener_echo', '" + PostgresListener.ECHO_PREFIX + "x'),"
                + " pg_notify('listener_echo', '')");
            await().atMost(Duration.ofSeconds(10)).until(() -> notified.get() == 2 && otherNotified.get() == 2);
            assertThat(listener.hearsNothing()).isFalse();
        }
    }

    /**
     * An echo that does not come back (here it is sent in another database, where nobody listens: what PgBouncer in
     * transaction mode does to every NOTIFY, PgBouncerIT): the listener says it hears nothing, and keeps its session,
     * since one opened again through the same pooler would hear no more. An echo awaited while the owner turns
     * LISTEN off cannot arrive and is not held against the session: the control beside it, which does the same but
     * turns LISTEN off while its echo is on its way, and on again after the echo's deadline, still counts as
     * hearing.
     */
    @Test
    void anEchoThatDoesNotComeBackIsReportedAndTheSessionKept() throws Exception {
        String elsewhere = pg.createDatabase();
        ConnectionSettings settings = settings(url, "listener-deaf");
        ConnectionSettings otherDatabase = settings(elsewhere, "listener-deaf-sender");
        AtomicInteger listening = new AtomicInteger();
        AtomicInteger offListening = new AtomicInteger();
        try (HikariDataSource pool = PostgresDataSources.pool(otherDatabase, 2, "listener-deaf");
             HikariDataSource offPool = PostgresDataSources.pool(otherDatabase, 2, "listener-deaf-off");
             PostgresListener deaf = new PostgresListener(settings, "listener_deaf", () -> { },
                 listening::incrementAndGet, "listener-deaf", pool);
             PostgresListener turnedOff = new PostgresListener(settings, "listener_deaf_off", () -> { },
                 offListening::incrementAndGet, "listener-deaf-off", offPool)) {
            deaf.start();
            turnedOff.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> listening.get() == 1 && offListening.get() == 1);

            deaf.checkAlive();
            turnedOff.checkAlive();
            // the pool opens its first session for the echo (it keeps none idle before): the echo is on its way
            await().atMost(Duration.ofSeconds(10)).until(() -> offPool.getHikariPoolMXBean().getTotalConnections() > 0);
            turnedOff.listen(false);
            await().atMost(Duration.ofMillis(PostgresListener.PROBE_TIMEOUT_MS + 15_000)).until(deaf::hearsNothing);
            turnedOff.listen(true); // past the echo's deadline: had it been kept, it would count as not come back
            await().atMost(Duration.ofSeconds(10)).until(() -> !turnedOff.changing());
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(7))
                .until(() -> !turnedOff.hearsNothing() && listening.get() == 1 && deaf.connected());
            assertThat(deaf.echoes()).isZero();
        }
    }

    /**
     * With every session of the owner's pool taken, no echo is sent: the thread would wait for a session (up to the
     * pool's 10 s) instead of reading notifications. A writer's NOTIFY sent once the probe has run still arrives at
     * once, and the session still counts as hearing.
     */
    @Test
    void noEchoIsSentFromAPoolWhoseSessionsAreAllTakenAndNotifiesStillArrive() throws Exception {
        ConnectionSettings settings = settings(url, "listener-full-pool");
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        try (HikariDataSource pool = PostgresDataSources.pool(settings, 2, "listener-full-pool");
             Connection taken = pool.getConnection();
             Connection alsoTaken = pool.getConnection();
             PostgresListener listener = new PostgresListener(settings, "listener_full_pool", notified::incrementAndGet,
                 listening::incrementAndGet, "listener-full-pool", pool);
             Connection owner = pg.owner(url)) {
            listener.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> listening.get() == 1);
            int pid = listener.backendPid();
            listener.checkAlive();
            await("the probe ran").atMost(Duration.ofSeconds(10)).until(() -> lastQuery(owner, pid).contains("SELECT 1"));
            owner.createStatement().execute("SELECT pg_notify('listener_full_pool', '')");
            await("arrives without waiting out the pool's 10 s").atMost(Duration.ofSeconds(5))
                .until(() -> notified.get() == 1);
            assertThat(listener.echoes()).isZero();
            assertThat(listener.hearsNothing()).isFalse();
        }
    }

    /**
     * A half-open session (nothing arrives and nothing says so, as when a firewall dropped the connection's
     * state) is found when the owner asks the listener to prove itself alive: its probe gets no answer in
     * time and the listener opens a new session. The control: without the ask, nothing happens in that time.
     */
    @Test
    void aHalfOpenSessionIsReplacedOnceTheOwnerAsksItToProveItselfAlive() throws Exception {
        AtomicInteger listening = new AtomicInteger();
        try (CuttingProxy proxy = CuttingProxy.inFrontOf(url, CuttingProxy.NOTHING)) {
            try (PostgresListener listener = started(proxy.through(url), "listener_half_open", new AtomicInteger(),
                    listening)) {
                assertThat(proxy.freezeSessionsThatSent("LISTEN ")).isOne();
                await().during(Duration.ofMillis(PostgresListener.PROBE_TIMEOUT_MS + 1_000))
                    .atMost(Duration.ofMillis(PostgresListener.PROBE_TIMEOUT_MS + 2_000))
                    .until(() -> listening.get() == 1);

                listener.checkAlive();
                await().atMost(Duration.ofMillis(2L * PostgresListener.PROBE_TIMEOUT_MS + 5_000))
                    .until(() -> listening.get() == 2);
            }
        }
    }

    /**
     * The owner turns LISTEN off (a relay task busy claiming on its pace needs no NOTIFY, and PostgreSQL wakes every
     * listening session of the database for each one sent there): no notification arrives, and a session opened
     * again meanwhile stays off. Turned on again, notifications arrive, and that is not reported as LISTEN coming
     * back (the owner chose not to hear). The control for "no notification arrives": the same NOTIFY arrives once
     * LISTEN is on.
     */
    @Test
    void listenTurnedOffHearsNothingEvenAfterAReconnectAndTurnedOnHearsAgain() throws Exception {
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        try (PostgresListener listener = started("listener_off_it", notified, listening);
             Connection owner = pg.owner(url)) {
            listener.listen(false);
            await().atMost(Duration.ofSeconds(10)).until(() -> !listener.changing());
            assertThat(lastQuery(owner, listener.backendPid())).startsWith("UNLISTEN");
            owner.createStatement().execute("SELECT pg_notify('listener_off_it', '')");
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> notified.get() == 0);

            int pid = listener.backendPid();
            owner.createStatement().execute("SELECT pg_terminate_backend(" + pid + ")");
            listener.checkAlive(); // nothing is read on a session with LISTEN off: the probe finds it gone
            await().atMost(Duration.ofSeconds(30)).until(() -> listener.connected() && listener.backendPid() != pid);
            assertThat(listening).as("a session opened while LISTEN is off does not LISTEN").hasValue(1);
            owner.createStatement().execute("SELECT pg_notify('listener_off_it', '')");
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> notified.get() == 0);

            listener.listen(true);
            await().atMost(Duration.ofSeconds(10)).until(() -> !listener.changing());
            owner.createStatement().execute("SELECT pg_notify('listener_off_it', '')");
            await().atMost(Duration.ofSeconds(10)).until(() -> notified.get() == 1);
            assertThat(listening).as("turned on by the owner: not reported").hasValue(1);

            int listeningPid = listener.backendPid();
            owner.createStatement().execute("SELECT pg_terminate_backend(" + listeningPid + ")");
            await().atMost(Duration.ofSeconds(30)).until(() -> listening.get() == 2);
            assertThat(listener.backendPid()).as("a session opened with LISTEN on is reported").isNotEqualTo(listeningPid);
        }
    }

    /**
     * The owner turns LISTEN off and at once on again, while the UNLISTEN may still be running: once the listener says
     * the change is made, LISTEN is in place, so a NOTIFY sent right then arrives (the relay arms its wake-up flag at
     * that moment, and the first writer's NOTIFY must find it listening). Many times over, to meet the interleavings;
     * each round sends one NOTIFY and waits for its own (the count), so a lost one cannot pass unseen.
     */
    @Test
    void onceAChangeIsMadeListenIsInPlaceEvenWhenTheOwnerFlippedItBackMeanwhile() throws Exception {
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        try (PostgresListener listener = started("listener_flip_it", notified, listening);
             Connection owner = pg.owner(url)) {
            for (int round = 0; round < 12; round++) {
                listener.listen(false);
                if (round % 3 == 0) {
                    await().atMost(Duration.ofSeconds(10)).until(() -> !listener.changing());
                }
                listener.listen(true);
                await().atMost(Duration.ofSeconds(10)).until(() -> !listener.changing());
                // the one NOTIFY of this round: lost if LISTEN were not in place yet
                owner.createStatement().execute("SELECT pg_notify('listener_flip_it', '')");
                int expected = round + 1;
                await("the NOTIFY of round " + round).atMost(Duration.ofSeconds(10))
                    .until(() -> notified.get() == expected);
            }
            assertThat(listening).as("every change was the owner's: none reported").hasValue(1);
        }
    }

    private static String lastQuery(Connection c, int pid) throws Exception {
        try (var rs = c.createStatement().executeQuery("SELECT query FROM pg_stat_activity WHERE pid = " + pid)) {
            return rs.next() ? rs.getString(1) : "";
        }
    }

    /**
     * The owner turns LISTEN off, and asks for it again while the UNLISTEN is still on its way (here: held by a frozen
     * connection until the statement's timeout): the change is not taken as done, since LISTEN is about to be gone,
     * and only once a session carries out the last request (here a new one, which LISTENs and says so) does a NOTIFY
     * arrive. The relay
     * arms its wake-up flag only when no change is pending, so this is the case where it would otherwise arm deaf.
     * The negative control: comparing the session's state with the request, as a first version did, said "done".
     */
    @Test
    void aChangeStillOnItsWayIsNotTakenAsDoneWhenTheOwnerAsksTheOppositeMeanwhile() throws Exception {
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        try (CuttingProxy proxy = CuttingProxy.inFrontOf(url, CuttingProxy.NOTHING)) {
            try (PostgresListener listener = started(proxy.through(url), "listener_in_flight", notified, listening);
                 Connection owner = pg.owner(url)) {
                assertThat(proxy.freezeSessionsThatSent("LISTEN ")).isOne();

                listener.listen(false);
                await().atMost(Duration.ofSeconds(10)).until(() -> proxy.anySessionSent("UNLISTEN "));
                listener.listen(true);
                assertThat(listener.changing()).as("the UNLISTEN is still on its way: LISTEN is not in place").isTrue();

                // the UNLISTEN times out, the session is replaced, and the new one LISTENs (and says so: notifications
                // sent meanwhile were lost)
                await().atMost(Duration.ofMillis(2L * PostgresListener.PROBE_TIMEOUT_MS + 10_000))
                    .until(() -> listening.get() == 2 && listener.connected() && !listener.changing());
                owner.createStatement().execute("SELECT pg_notify('listener_in_flight', '')");
                await().atMost(Duration.ofSeconds(10)).until(() -> notified.get() == 1);
            }
        }
    }
}
