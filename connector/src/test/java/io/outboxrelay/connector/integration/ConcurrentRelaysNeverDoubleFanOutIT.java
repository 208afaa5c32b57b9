package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Several tasks, and two connectors on one table, share one outbox: in a fault-free run each row is
 * claimed and fanned out by exactly one of them, so the topic holds each event once.
 */
class ConcurrentRelaysNeverDoubleFanOutIT {
    private static final int EVENTS = 4_000;

    @AfterAll
    static void stop() {
        TestConnect.cluster().deleteConnector("twin-a");
        TestConnect.cluster().deleteConnector("twin-b");
    }

    @Test
    void twoConnectorsWithTwoTasksEachFanOutEveryRowExactlyOnce() {
        TestDatabase db = TestPostgres.get().createDatabase("twins");
        for (String name : List.of("twin-a", "twin-b")) {
            Map<String, String> cfg = TestConnect.relayConfig(db, "hooks", 2);
            cfg.put("subscription.hooks.topic", "twins-hooks");
            cfg.put("outbox.batch.size", "50");
            TestConnect.cluster().configureConnector(name, cfg);
        }
        // written while all four tasks are claiming
        for (int i = 0; i < 8; i++) {
            db.insertEvents(EVENTS / 8, 200, "order.created");
        }

        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == EVENTS);
        assertThat(TestConnect.countRecords("twins-hooks")).isEqualTo(EVENTS);
        List<TestConnect.Received> received = TestConnect.consume(EVENTS, Duration.ofSeconds(60), "twins-hooks");
        Set<String> ids = new HashSet<>();
        received.forEach(r -> ids.add(r.id()));
        assertThat(ids).hasSize(EVENTS);
        // fault-free: every row was claimed once and no lease is left behind
        assertThat(db.queryLong("SELECT max(attempts) FROM events")).isEqualTo(1);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner IS NOT NULL")).isZero();
    }
}
