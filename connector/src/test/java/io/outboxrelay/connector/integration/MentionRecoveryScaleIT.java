package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A large unrouted backlog (20,000 messages, e.g. after a long outage of the server's live pass) is
 * recovered completely, every message marked and every routed member's record published once, while
 * the companion task keeps one batch in flight at a time: its memory is bounded by
 * {@code mentions.batch.size}, not by the backlog. Bounded memory is checked two ways: Connect's own
 * {@code source-record-active-count-max} (records polled but not yet acknowledged, maintained by the
 * worker on every poll and ack, so no peak is missed) never exceeds one batch's records, and a sampler
 * never sees more than one batch of messages with owed rows still unmarked.
 */
class MentionRecoveryScaleIT {
    private static final String CONNECTOR = "mentions-scale";
    private static final String TOPIC = "mentions-scale-recovered";
    private static final int MESSAGES = 20_000;
    private static final int BATCH = 200;
    /** Each message mentions one of four OWED agents and the one WAKE agent. */
    private static final int RECORDS_PER_MESSAGE = 2;
    /** The companion task: tasks.max 2 = one relay task (0) + the companion (1). */
    private static final int MENTIONS_TASK = 1;
    private static TestDatabase db;

    @BeforeAll
    static void backlog() {
        db = TestPostgres.get().createDatabase("mentions_scale");
        db.execute("""
            INSERT INTO channels (id, name) VALUES ('ch', '#ch');
            INSERT INTO topics (id, channel_id) VALUES ('t-ch', 'ch');
            INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES ('u-hugo', 'hugo', 'human', 'ch');
            INSERT INTO accounts (id, handle, kind, home_channel_id)
              SELECT 'a-o' || g, 'o' || g, 'agent', 'elsewhere' FROM generate_series(0, 3) g;
            INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES ('a-w', 'w', 'agent', 'elsewhere');
            INSERT INTO channel_members (channel_id, account_id, subscribed)
              SELECT 'ch', 'a-o' || g, false FROM generate_series(0, 3) g;
            INSERT INTO channel_members (channel_id, account_id, subscribed)
              VALUES ('ch', 'a-w', true), ('ch', 'u-hugo', true);
            """);
        db.execute("INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) "
            + "SELECT 'm-' || g, 't-ch', 'u-hugo', jsonb_build_array(jsonb_build_object('type', 'text', "
            + "'text', 'hey @o' || (g % 4) || ' and @w, see #' || g)), "
            + "(extract(epoch FROM now()) * 1000)::bigint FROM generate_series(1, " + MESSAGES + ") g");
        assertThat(db.queryLong("SELECT count(*) FROM messages WHERE mentions_routed_at IS NULL")).isEqualTo(MESSAGES);
    }

    @AfterAll
    static void stop() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void recoversAWholeBacklogWithOneBatchInFlightAtATime() throws Exception {
        TestConnect.cluster(); // started before the clock runs
        Map<String, String> cfg = TestConnect.relayConfig(db, "chat", 2);
        cfg.put("subscription.chat.topic", "mentions-scale-events");
        cfg.put("mentions.enabled", "true");
        cfg.put("mentions.topic", TOPIC);
        cfg.put("mentions.batch.size", Integer.toString(BATCH));
        cfg.put("mentions.scan.interval.ms", "3600000"); // the start pass alone must cover the backlog

        ScheduledExecutorService sampling = Executors.newSingleThreadScheduledExecutor();
        try (Sampler sampler = new Sampler()) {
            long t0 = System.nanoTime();
            TestConnect.cluster().configureConnector(CONNECTOR, cfg);
            sampling.scheduleWithFixedDelay(sampler::sample, 0, 20, TimeUnit.MILLISECONDS);
            try {
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                    .until(() -> db.queryLong("SELECT count(*) FROM messages WHERE mentions_routed_at IS NULL") == 0);
            } finally {
                sampling.shutdown();
                assertThat(sampling.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            }
            verify(sampler, t0);
        }
    }

    private void verify(Sampler sampler, long t0) {
        long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("MentionRecoveryScaleIT: %d messages, %d records recovered and marked in %d ms "
                + "(connector start included; %.0f messages/s); max in flight: %d messages (sampled %d times), "
                + "%d records (Connect's active count)%n", MESSAGES, MESSAGES * RECORDS_PER_MESSAGE, elapsedMs,
            MESSAGES * 1000.0 / Math.max(1, elapsedMs), sampler.maxUnmarkedOwed.get(), sampler.samples.get(),
            sampler.maxActiveRecords.get());

        assertThat(db.queryLong("SELECT count(*) FROM messages WHERE mentions_routed_at IS NOT NULL"))
            .isEqualTo(MESSAGES);
        assertThat(db.queryLong("SELECT count(*) FROM owed_mentions")).isEqualTo(MESSAGES);
        assertThat(db.queryLong("SELECT count(*) FROM owed_mentions o JOIN messages m ON m.id = o.message_id "
            + "WHERE o.agent_account_id = 'a-o' || (substr(m.id, 3)::int % 4)")).as("owed to the mentioned agent")
            .isEqualTo(MESSAGES);
        assertThat(TestConnect.countRecords(TOPIC)).isEqualTo((long) MESSAGES * RECORDS_PER_MESSAGE);
        assertThat(taskMetric("source-record-write-total")).as("records acknowledged to the task")
            .isEqualTo(MESSAGES * RECORDS_PER_MESSAGE);

        assertThat(sampler.failure.get()).as("sampler failure").isNull();
        assertThat(sampler.samples.get()).as("sampler rounds").isGreaterThan(0);
        assertThat(sampler.maxUnmarkedOwed.get()).as("messages in flight (owed rows written, not marked)")
            .isLessThanOrEqualTo(BATCH);
        sampler.sampleActive();
        assertThat(sampler.maxActiveRecords.get()).as("records polled and not yet acknowledged, at any time")
            .isGreaterThan(0)
            .isLessThanOrEqualTo(BATCH * RECORDS_PER_MESSAGE);
    }

    /** A metric of the companion task's {@code source-task-metrics} MBean, or -1 while it is not there. */
    private static long taskMetric(String attribute) {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName("kafka.connect:type=source-task-metrics,connector=" + CONNECTOR
                + ",task=" + MENTIONS_TASK);
            if (!server.isRegistered(name)) {
                return -1;
            }
            double v = ((Number) server.getAttribute(name, attribute)).doubleValue();
            return Double.isFinite(v) ? (long) v : -1;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Samples the messages whose owed rows exist but which are not marked yet (one consistent snapshot
     * per query: owed rows of a batch are written before its records are produced, marks only after
     * their acknowledgements), and Connect's windowed maximum of the task's active records.
     */
    private static final class Sampler implements AutoCloseable {
        final AtomicLong maxUnmarkedOwed = new AtomicLong();
        final AtomicLong maxActiveRecords = new AtomicLong(-1);
        final AtomicInteger samples = new AtomicInteger();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Connection connection;
        private final PreparedStatement inFlight;

        Sampler() throws SQLException {
            connection = db.connect();
            inFlight = connection.prepareStatement("SELECT count(*) FROM messages m WHERE m.mentions_routed_at IS NULL "
                + "AND EXISTS (SELECT 1 FROM owed_mentions o WHERE o.message_id = m.id)");
        }

        void sample() {
            try (ResultSet rs = inFlight.executeQuery()) {
                rs.next();
                maxUnmarkedOwed.accumulateAndGet(rs.getLong(1), Math::max);
                sampleActive();
                samples.incrementAndGet();
            } catch (SQLException | RuntimeException e) {
                failure.compareAndSet(null, e);
            }
        }

        void sampleActive() {
            maxActiveRecords.accumulateAndGet(taskMetric("source-record-active-count-max"), Math::max);
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }
}
