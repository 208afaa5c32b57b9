package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * With {@code outbox.listen.enabled=false} (PgBouncer in transaction mode) nothing wakes the task but
 * its own poll interval: events still arrive, every one of them, with no NOTIFY wake-up at all.
 */
class PollingWithoutListenIT {
    private static final String TOPIC = "polling-events";
    private String connector;

    @AfterEach
    void deleteConnector() {
        if (connector != null) {
            TestConnect.cluster().deleteConnector(connector);
        }
    }

    @Test
    void withoutListenEveryEventArrivesByPollingAlone() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("polling");
        connector = "polling";
        Map<String, String> cfg = TestConnect.relayConfig(db, "poll", 1);
        cfg.put("subscription.poll.topic", TOPIC);
        cfg.put("outbox.listen.enabled", "false");
        cfg.put("outbox.poll.interval.ms", "50");
        cfg.put("outbox.sweep.interval.ms", "3600000");
        TestConnect.cluster().configureConnector(connector, cfg);
        TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(connector, 1, "not running");

        // three separate writes while the task idles between polls
        for (int i = 0; i < 3; i++) {
            db.insertEvents(100, 10, "order.created");
            int expected = 100 * (i + 1);
            await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong(
                "SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == expected);
        }
        assertThat(TestConnect.consume(300, Duration.ofSeconds(30), TOPIC)).hasSize(300);
        assertThat(RelayMetricsAndRetentionIT.metric(connector, "notify-wakeups-total")).isZero();
        assertThat(RelayMetricsAndRetentionIT.metric(connector, "sweeps-total")).isZero();
    }
}
