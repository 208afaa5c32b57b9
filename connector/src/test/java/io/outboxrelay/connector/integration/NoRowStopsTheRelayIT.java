package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * No row can stop the relay (issue 24): an application bug commits odd rows among ordinary ones (an event
 * type of 20,000 dots against a subscription of three stars, an occurred_at of 1900, of 'infinity' and two
 * hours ahead, which a Kafka 4 broker rejects as a record timestamp), and no task ever fails, the ordinary
 * rows arrive at once, and every odd row ends delivered or poisoned. Before, the tasks failed over and over
 * ("Unrecoverable exception from producer send callback"), the dots held a task's poll() for hours, and the
 * odd rows stayed pending. A record the broker rejects for a reason the relay cannot check beforehand still
 * fails the task, but counts as its row's attempt, so restarts end in its poisoning instead of a crash loop.
 */
class NoRowStopsTheRelayIT {
    private static final String ORDINARY_TYPE = "shop.order.line.created";
    private static final ObjectMapper JSON = new ObjectMapper();
    private String connector;
    private FailedTaskWatch watch;

    @AfterEach
    void deleteConnector() {
        if (watch != null) {
            watch.close();
        }
        TestConnect.cluster().deleteConnector(connector);
    }

    private static long pending(TestDatabase db, String where) {
        return db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL AND " + where);
    }

    private static String lastError(TestDatabase db, long seq) {
        return (String) db.query("SELECT last_error FROM events WHERE seq = ?", seq).get(0).get(0);
    }

    private static long insertAt(TestDatabase db, String subject, String occurredAt) {
        return db.queryLong("INSERT INTO events(type, subject, occurred_at) VALUES (?, ?, " + occurredAt + ") RETURNING seq",
            ORDINARY_TYPE, subject);
    }

    @Test
    void oddRowsAmongOrdinaryOnesFailNoTaskAndEndDeliveredOrPoisoned() {
        TestDatabase db = TestPostgres.get().createDatabase("odd_rows");
        long dots = db.insertEvent(".".repeat(20_000), "odd-dots", "{}");
        long y1900 = insertAt(db, "odd-1900", "'1900-01-01T00:00:00Z'");
        long infinity = insertAt(db, "odd-infinity", "'infinity'");
        long ahead = insertAt(db, "odd-ahead", "now() + interval '2 hours'");
        db.insertEvents(200, 40, ORDINARY_TYPE);
        connector = "odd-rows";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 2);
        cfg.put("subscription.orders.topic", "odd-rows-orders");
        cfg.put("subscription.orders.event.types", "*.*.*.created");
        cfg.put("outbox.max.attempts", "3");
        long started = System.currentTimeMillis();
        TestConnect.cluster().configureConnector(connector, cfg);
        watch = new FailedTaskWatch(connector);

        await().atMost(Duration.ofSeconds(30)).until(() -> pending(db, "type = '" + ORDINARY_TYPE + "' AND subject LIKE 'subject-%'") == 0);
        await().atMost(Duration.ofSeconds(60)).until(() -> pending(db, "true") == 0);

        assertThat(watch.failures()).as("no task ever FAILED").isEmpty();
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL")).isEqualTo(1);
        assertThat(lastError(db, infinity)).contains("'infinity'").contains("events_requeue(" + infinity + ")");
        assertThat(db.query("SELECT fanout::text FROM events WHERE seq = ?", dots).get(0).get(0))
            .as("no subscription wants that type").isEqualTo("{}");
        List<ConsumerRecord<byte[], byte[]>> records = TestConnect.consumeRaw(202, Duration.ofSeconds(30), "odd-rows-orders");
        assertThat(records).hasSize(202);
        long finished = System.currentTimeMillis();
        Map<Long, ConsumerRecord<byte[], byte[]>> bySeq = records.stream()
            .collect(Collectors.toMap(r -> envelope(r).get("seq").asLong(), r -> r));
        for (long odd : new long[] {y1900, ahead}) {
            assertThat(bySeq.get(odd).timestamp()).as("seq %d carries the time its record was made", odd)
                .isBetween(started, finished);
        }
        assertThat(envelope(bySeq.get(y1900)).get("occurred_at").asLong()).as("the envelope keeps occurred_at")
            .isEqualTo(Instant.parse("1900-01-01T00:00:00Z").toEpochMilli());
    }

    private static JsonNode envelope(ConsumerRecord<byte[], byte[]> r) {
        try {
            return JSON.readTree(r.value());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A topic that takes messages of at most 1500 bytes rejects one row's record, after the send: a limit the
     * relay cannot know (its own outbox.max.record.bytes is 1 MB). Under errors.tolerance=none that fails
     * the task, and Connect does not say which record it was; records sent with and after it were
     * acknowledged, so the stop counts the row's attempt, and the restarts end in its poisoning while
     * every other row is delivered. Before, each stop gave the attempt back and the row failed the task on
     * every restart, forever.
     */
    @Test
    void aRecordTheBrokerRejectsCountsAsItsRowsAttemptSoRestartsEndInItsPoisoning() {
        TestDatabase db = TestPostgres.get().createDatabase("rejected_none");
        connector = "rejected-none";
        TestConnect.cluster().kafka().createTopic("rejected-none-orders", 1, 1, Map.of("max.message.bytes", "1500"));
        db.insertEvents(10, 10, ORDINARY_TYPE);
        long big = db.insertEvent(ORDINARY_TYPE, "big-1", "{\"blob\":\"" + "x".repeat(3_000) + "\"}");
        db.insertEvents(10, 10, ORDINARY_TYPE);
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", "rejected-none-orders");
        cfg.put("outbox.max.attempts", "3");
        TestConnect.cluster().configureConnector(connector, cfg);

        String poisoned = "SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL";
        int failures = 0;
        while (db.queryLong(poisoned) == 0 && failures < 8) {
            await().atMost(Duration.ofSeconds(60))
                .until(() -> FailedTaskWatch.failed(connector) || db.queryLong(poisoned) > 0);
            if (FailedTaskWatch.failed(connector)) {
                failures++;
                TestConnect.cluster().restartTask(connector, 0);
                await().atMost(Duration.ofSeconds(30)).until(() -> !FailedTaskWatch.failed(connector));
            }
        }
        assertThat(failures).as("one failure per attempt, then poisoned").isEqualTo(3);
        await().atMost(Duration.ofSeconds(30)).until(() -> pending(db, "true") == 0);
        assertThat(lastError(db, big)).contains("claimed 4 times").contains("rejected");
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL")).isEqualTo(20);
        assertThat(TestConnect.countRecords("rejected-none-orders")).isEqualTo(20);
    }

    /** Every task of a connector, watched every 100 ms for the whole test: a FAILED state is noted with its trace. */
    static final class FailedTaskWatch implements AutoCloseable {
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        private final Set<String> failures = ConcurrentHashMap.newKeySet();

        FailedTaskWatch(String connector) {
            timer.scheduleWithFixedDelay(() -> {
                try {
                    for (ConnectorStateInfo.TaskState t : TestConnect.cluster().connectorStatus(connector).tasks()) {
                        if ("FAILED".equals(t.state())) {
                            failures.add("task " + t.id() + ": " + t.trace());
                        }
                    }
                } catch (RuntimeException e) {
                    // not created yet, or a REST call that timed out: the next look sees it
                }
            }, 0, 100, TimeUnit.MILLISECONDS);
        }

        Set<String> failures() {
            return failures;
        }

        static boolean failed(String connector) {
            return TestConnect.cluster().connectorStatus(connector).tasks().stream()
                .anyMatch(t -> "FAILED".equals(t.state()));
        }

        @Override
        public void close() {
            timer.shutdownNow();
        }
    }
}
