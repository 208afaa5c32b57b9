package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * 10,000 events over three subscriptions with overlapping event types: every event reaches every
 * matching topic exactly once, in seq order per subject, and every row is stamped with a fanout that
 * names the real offsets; an event no subscription wants is stamped with an empty fanout.
 */
class FanOutEndToEndIT {
    private static final String CONNECTOR = "fanout-e2e";
    private static final int EVENTS = 10_000;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestDatabase db;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("fanout_e2e");
        // types cycle: supplier.connected, supplier.activated, note.created, audit.only
        db.insertEvents(EVENTS, 100, "supplier.connected", "supplier.activated", "note.created", "audit.only");
        Map<String, String> cfg = TestConnect.relayConfig(db, "corpus.index,webhooks,mail", 1);
        cfg.put("subscription.corpus.index.topic", "e2e-corpus");
        cfg.put("subscription.corpus.index.event.types", "supplier.*,note.created");
        cfg.put("subscription.webhooks.topic", "e2e-webhooks");
        cfg.put("subscription.webhooks.event.types", "supplier.*");
        cfg.put("subscription.mail.topic", "e2e-mail");
        cfg.put("subscription.mail.event.types", "supplier.activated,note.*");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
    }

    @AfterAll
    static void stop() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void everyEventReachesEveryMatchingTopicOnceInSeqOrderPerSubject() throws Exception {
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0);

        Map<String, List<TestConnect.Received>> receivedByTopic = new HashMap<>();
        Map<String, Set<String>> expectedTypes = Map.of(
            "e2e-corpus", Set.of("supplier.connected", "supplier.activated", "note.created"),
            "e2e-webhooks", Set.of("supplier.connected", "supplier.activated"),
            "e2e-mail", Set.of("supplier.activated", "note.created"));
        for (var e : expectedTypes.entrySet()) {
            String topic = e.getKey();
            long expected = db.queryLong("SELECT count(*) FROM events WHERE type = ANY(string_to_array(?, ','))",
                String.join(",", e.getValue()));
            assertThat(TestConnect.countRecords(topic)).as("records on %s", topic).isEqualTo(expected);
            List<TestConnect.Received> received = TestConnect.consume((int) expected, Duration.ofSeconds(60), topic);
            assertThat(received).hasSize((int) expected);
            receivedByTopic.put(topic, received);
            Set<Long> seqs = new HashSet<>();
            Map<String, Long> lastSeqPerSubject = new HashMap<>();
            for (TestConnect.Received r : received) {
                assertThat(seqs.add(r.seq())).as("seq %d delivered twice to %s", r.seq(), topic).isTrue();
                assertThat(e.getValue()).contains(r.value().get("type").asText());
                assertThat(r.key()).isEqualTo(r.value().get("subject").asText());
                assertThat(r.headers()).containsEntry("event.id", r.id())
                    .containsEntry("event.type", r.value().get("type").asText());
                // a record's partition is its subject's, so per-partition order is per-subject order
                Long previous = lastSeqPerSubject.put(r.key() + "@" + r.partition(), r.seq());
                if (previous != null) {
                    assertThat(r.seq()).as("order of subject %s on %s", r.key(), topic).isGreaterThan(previous);
                }
            }
        }

        // every fanout names a real offset: check a sample row against the topic
        List<List<Object>> sample = db.query(
            "SELECT seq, fanout::text FROM events WHERE type = 'supplier.activated' ORDER BY seq LIMIT 1");
        JsonNode fanout = JSON.readTree((String) sample.get(0).get(1));
        assertThat(fanout.fieldNames()).toIterable().containsExactlyInAnyOrder("corpus.index", "webhooks", "mail");
        JsonNode mail = fanout.get("mail");
        long seq = ((Number) sample.get(0).get(0)).longValue();
        assertThat(receivedByTopic.get("e2e-mail")).anySatisfy(r -> {
            assertThat(r.seq()).isEqualTo(seq);
            assertThat(r.partition()).isEqualTo(mail.get("partition").asInt());
            assertThat(r.offset()).isEqualTo(mail.get("offset").asLong());
        });

        // no subscription wants audit.only: stamped with an empty fanout
        assertThat(db.query("SELECT DISTINCT fanout::text FROM events WHERE type = 'audit.only'"))
            .containsExactly(List.of("{}"));
    }
}
