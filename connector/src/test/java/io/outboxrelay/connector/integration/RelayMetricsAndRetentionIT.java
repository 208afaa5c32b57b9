package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Operators read the relay's health over JMX from the running worker, and retention keeps the outbox
 * small during a steady run while claims and stamps go on.
 */
class RelayMetricsAndRetentionIT {
    private String connector;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(connector);
    }

    static double metric(String connector, String attribute) throws Exception {
        return metric(connector, "relay", attribute);
    }

    /**
     * The sum of one metric over the connector's tasks of a kind ("relay" or "mentions"), read over JMX; an
     * IllegalStateException while no such task is running (not started yet, or stopped by a rebalance).
     */
    static double metric(String connector, String kind, String attribute) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = server.queryNames(new ObjectName("kafka.connect:type=plugins,*"), null);
        double sum = 0;
        boolean found = false;
        for (ObjectName n : names) {
            if (connector.equals(n.getKeyProperty("connector")) && kind.equals(n.getKeyProperty("kind"))
                && publishes(server, n, attribute)) {
                sum += ((Number) server.getAttribute(n, attribute)).doubleValue();
                found = true;
            }
        }
        if (!found) {
            throw new IllegalStateException("no " + kind + " metrics for " + connector + " among " + names);
        }
        return sum;
    }

    private static boolean publishes(MBeanServer server, ObjectName name, String attribute) throws Exception {
        return Arrays.stream(server.getMBeanInfo(name).getAttributes()).anyMatch(a -> a.getName().equals(attribute));
    }

    /** How many of the connector's relay tasks publish {@code attribute}. */
    static long publishers(String connector, String attribute) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        long n = 0;
        for (ObjectName name : server.queryNames(new ObjectName("kafka.connect:type=plugins,*"), null)) {
            if (connector.equals(name.getKeyProperty("connector")) && "relay".equals(name.getKeyProperty("kind"))
                && publishes(server, name, attribute)) {
                n++;
            }
        }
        return n;
    }

    @Test
    void theRelayTaskMetricsAreReadableFromTheRunningWorker() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("metrics");
        // seven rows waiting for a retry an hour from now: a backlog that stays put while the test reads it
        db.execute("INSERT INTO events(type, subject, attempts, next_attempt_at) SELECT 'order.created',"
            + " 'later-' || g, 1, now() + interval '1 hour' FROM generate_series(1, 7) g");
        connector = "metrics";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 2);
        cfg.put("subscription.orders.topic", "metrics-orders");
        TestConnect.cluster().configureConnector(connector, cfg);
        TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(connector, 2, "relay up");
        // RUNNING comes when start() returns; the LISTEN sessions may still be connecting
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT count(*) FROM pg_stat_activity "
            + "WHERE datname = current_database() AND query LIKE 'LISTEN%'") == 2);
        db.insertEvents(500, 50, "order.created");
        db.execute("INSERT INTO events(type, subject, headers) VALUES ('order.created', 'bad', '[1]')");

        await().atMost(Duration.ofSeconds(30)).ignoreException(IllegalStateException.class).until(() -> metric(connector, "rows-fanned-total") == 500
            && metric(connector, "rows-poisoned-total") == 1);
        assertThat(metric(connector, "rows-claimed-total")).isEqualTo(501);
        assertThat(metric(connector, "notify-wakeups-total")).isGreaterThan(0);
        assertThat(metric(connector, "rows-in-flight")).isZero();
        assertThat(metric(connector, "claim-latency-max-ms")).isGreaterThanOrEqualTo(0);
        assertThat(metric(connector, "rows-fanned-rate")).isGreaterThan(0);
        // table-wide figures come from one task, so a dashboard that sums over tasks counts them once
        await().atMost(Duration.ofSeconds(30)).ignoreException(IllegalStateException.class).until(() -> metric(connector, "backlog-rows") == 7);
        assertThat(metric(connector, "oldest-unfanned-age-ms")).isGreaterThan(0);
        assertThat(publishers(connector, "backlog-rows")).isEqualTo(1);
        assertThat(publishers(connector, "oldest-unfanned-age-ms")).isEqualTo(1);
        assertThat(publishers(connector, "rows-fanned-total")).isEqualTo(2);
    }

    /** A backlog makes a task's claims grow to outbox.batch.max.size; once drained they shrink back to the floor. */
    @Test
    void claimsGrowWithTheBacklogAndShrinkBackWhenItIsDrained() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("claim_size");
        db.insertEvents(6_000, 100, "order.created");
        connector = "claim-size";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", "claim-size-orders");
        cfg.put("outbox.batch.size", "100");
        cfg.put("outbox.batch.max.size", "800");
        TestConnect.cluster().configureConnector(connector, cfg);

        await().atMost(Duration.ofSeconds(60)).ignoreException(IllegalStateException.class).until(() -> metric(connector, "rows-fanned-total") == 6_000);
        assertThat(metric(connector, "claim-size-max")).as("claims grew with the backlog, to the max").isEqualTo(800);
        await().atMost(Duration.ofSeconds(30)).ignoreException(IllegalStateException.class).until(() -> metric(connector, "claim-size") == 100);
        assertThat(TestConnect.countRecords("claim-size-orders")).isEqualTo(6_000);
    }

    @Test
    void retentionKeepsTheTableSmallWhileClaimsAndStampsRun() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("retention");
        db.execute("GRANT DELETE ON events TO outbox_relay");
        connector = "retention";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 2);
        cfg.put("subscription.orders.topic", "retention-orders");
        cfg.put("outbox.retention.ms", "500");
        cfg.put("outbox.retention.interval.ms", "200");
        TestConnect.cluster().configureConnector(connector, cfg);
        db.execute("INSERT INTO events(type, subject, headers) VALUES ('order.created', 'poison', '\"x\"')");

        long maxRows = 0;
        for (int round = 0; round < 20; round++) {
            db.insertEvents(200, 20, "order.created"); // a steady load: 20 rounds of 200
            await().atMost(Duration.ofSeconds(30))
                .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL") == 0);
            maxRows = Math.max(maxRows, db.queryLong("SELECT count(*) FROM events"));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT count(*) FROM events") == 1);
        // only the poisoned row is left; every event reached the topic; the table never held the whole run
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL")).isEqualTo(1);
        assertThat(TestConnect.countRecords("retention-orders")).isEqualTo(4_000);
        assertThat(maxRows).isLessThan(4_000);
        assertThat(TestConnect.cluster().connectorStatus(connector).tasks())
            .allSatisfy(t -> assertThat(t.state()).isEqualTo("RUNNING"));
    }
}
