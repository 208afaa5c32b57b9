package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.PostgresDataSources;
import io.outboxrelay.common.PostgresListener;
import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.PgBouncer;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The relay behind a real PgBouncer in transaction mode, as config-examples/outbox-relay-pgbouncer.json sets it
 * up: {@code prepareThreshold=0}, {@code outbox.listen.enabled=false}. Until 2026-12-05 every session sent its
 * server settings as the startup packet's {@code options}, which PgBouncer refuses at login, so the example never
 * connected. Runs where a {@code pgbouncer} binary is installed (Debian: {@code apt-get install pgbouncer}); the
 * project's own set-up needs only a JDK, so elsewhere it is skipped.
 */
class PgBouncerIT {
    private static final String TOPIC = "pgbouncer-events";
    private TestDatabase db;
    private PgBouncer bouncer;
    private String connector;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(PgBouncer.installed(), "no pgbouncer binary on this machine");
        db = TestPostgres.get().createDatabase("pgbouncer");
        bouncer = PgBouncer.inFrontOf(db);
    }

    @AfterEach
    void stop() throws Exception {
        if (connector != null) {
            TestConnect.cluster().deleteConnector(connector);
        }
        if (bouncer != null) {
            bouncer.close();
        }
    }

    /** A relay of {@code tasks} tasks with one subscription to {@code topic}, connecting through PgBouncer. */
    private Map<String, String> throughBouncer(int tasks, String topic) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "poll", tasks);
        cfg.put("connection.url", bouncer.jdbcUrl(db));
        cfg.put("subscription.poll.topic", topic);
        return cfg;
    }

    @Test
    void pgBouncerRefusesALoginThatCarriesServerSettingsAsStartupOptions() {
        // the negative control: how every session of the relay logged in before
        Properties p = new Properties();
        p.setProperty("user", db.user());
        if (db.password() != null) {
            p.setProperty("password", db.password());
        }
        p.setProperty("options", "-c statement_timeout=30000");
        assertThatThrownBy(() -> DriverManager.getConnection(bouncer.jdbcUrl(db), p).close())
            .isInstanceOf(SQLException.class).hasMessageContaining("unsupported startup parameter");
    }

    @Test
    void everyEventArrivesThroughPgBouncerInTransactionModeOnTwoTasks() throws Exception {
        connector = "pgbouncer";
        Map<String, String> cfg = throughBouncer(2, TOPIC);
        cfg.put("outbox.listen.enabled", "false");
        cfg.put("outbox.poll.interval.ms", "50");
        TestConnect.cluster().configureConnector(connector, cfg);
        TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(connector, 2, "not running");

        for (int i = 1; i <= 3; i++) {
            db.insertEvents(200, 20, "order.created");
            int expected = 200 * i;
            await().atMost(Duration.ofSeconds(60)).until(() -> db.queryLong(
                "SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == expected);
        }
        List<TestConnect.Received> received = TestConnect.consume(600, Duration.ofSeconds(30), TOPIC);
        Set<Long> seqs = received.stream().map(TestConnect.Received::seq).collect(Collectors.toSet());
        assertThat(seqs).as("every event, each seq").hasSize(600);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL")).isZero();
        try (Connection direct = db.connect()) {
            assertThat(direct.isValid(1)).isTrue();
        }
    }

    /**
     * A user who left LISTEN on behind PgBouncer in transaction mode, for the relay ({@code outbox.listen.enabled})
     * and for mention recovery ({@code mentions.notify.channel}), loses nothing (a quiet relay task looks at least
     * every 250 ms) and is told, in the worker's log, that LISTEN hears nothing and what to set; each task's metric
     * {@code listen-hears-nothing} is 1. The relay task finds out at its first look that finds rows; the mention
     * task at its session's first probe, 30 s after it opens.
     */
    @Test
    void withListenLeftOnBehindPgBouncerEveryEventArrivesAndTheLogAndMetricsSayWhatToSet() throws Exception {
        connector = "pgbouncer-listen";
        Map<String, String> cfg = throughBouncer(2, TOPIC + "-listen");
        cfg.put("mentions.enabled", "true");
        cfg.put("mentions.topic", "pgbouncer-mentions");
        try (LogCapture log = LogCapture.start()) {
            TestConnect.cluster().configureConnector(connector, cfg);
            TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(connector, 2, "not running");
            db.insertEvents(100, 10, "order.created");
            await().atMost(Duration.ofSeconds(60)).until(() -> db.queryLong(
                "SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == 100);
            await().atMost(Duration.ofSeconds(60)).until(() -> log.text().contains("LISTEN outbox_events hears"));
            assertThat(log.text()).contains("set outbox.listen.enabled=false");
            assertThat(RelayMetricsAndRetentionIT.metric(connector, "listen-hears-nothing")).isEqualTo(1);
            await().atMost(Duration.ofSeconds(90)).until(() -> log.text().contains("LISTEN mentions_recovery hears"));
            assertThat(log.text()).contains("mentions.notify.channel to empty");
            assertThat(RelayMetricsAndRetentionIT.metric(connector, "mentions", "listen-hears-nothing")).isEqualTo(1);
        }
        Set<Long> seqs = TestConnect.consume(100, Duration.ofSeconds(30), TOPIC + "-listen").stream()
            .map(TestConnect.Received::seq).collect(Collectors.toSet());
        assertThat(seqs).as("every event, each seq").hasSize(100);
    }

    /**
     * With LISTEN on behind PgBouncer in transaction mode, the session answers every query and hears nothing: LISTEN
     * ran on a server session the pooler lent for one statement, and a NOTIFY reaching that server session back in
     * the pool reaches no client. The listener's echo (a NOTIFY from its owner's pool with a payload of its own)
     * does not come back, so it says so, with what to set. The control: a listener that proves its session only by
     * a round trip finds nothing wrong with an equally deaf session.
     */
    @Test
    void aListenSessionThroughPgBouncerHearsNothingAndOnlyTheEchoFindsOut() throws Exception {
        ConnectionSettings settings = new ConnectionSettings(bouncer.jdbcUrl(db), db.user(), db.password(), null,
            30_000, 60_000, 60_000, "off", "bouncer-listener");
        AtomicInteger notified = new AtomicInteger();
        AtomicInteger listening = new AtomicInteger();
        AtomicInteger roundTripListening = new AtomicInteger();
        try (LogCapture log = LogCapture.start();
             HikariDataSource pool = PostgresDataSources.pool(settings, 2, "bouncer-echo");
             PostgresListener echoed = new PostgresListener(settings, "bouncer_listen", notified::incrementAndGet,
                 listening::incrementAndGet, "bouncer-listen-echo", pool);
             PostgresListener roundTripOnly = new PostgresListener(settings, "bouncer_round_trip",
                 notified::incrementAndGet, roundTripListening::incrementAndGet, "bouncer-listen-round-trip");
             Connection writer = db.connect()) {
            echoed.start();
            roundTripOnly.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> listening.get() == 1 && roundTripListening.get() == 1);
            writer.createStatement()
                .execute("SELECT pg_notify('bouncer_listen', ''), pg_notify('bouncer_round_trip', '')");
            await("a writer's NOTIFY reaches neither").during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(7))
                .until(() -> notified.get() == 0);

            echoed.checkAlive();
            roundTripOnly.checkAlive();
            await().atMost(Duration.ofMillis(PostgresListener.PROBE_TIMEOUT_MS + 15_000)).until(echoed::hearsNothing);
            assertThat(log.text()).contains("LISTEN bouncer_listen hears nothing")
                .contains("set outbox.listen.enabled=false")
                .as("the round trip alone finds nothing wrong").doesNotContain("LISTEN bouncer_round_trip lost");
            assertThat(echoed.echoes()).isZero();
            assertThat(listening).as("kept: a session opened again would be as deaf").hasValue(1);
            assertThat(roundTripListening).hasValue(1);
            assertThat(notified).hasValue(0);
        }
    }
}
