package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The seed's regression: an early build coalesced for every subscriber and dropped
 * {@code supplier.connected} when {@code supplier.activated} followed in the same batch. Only opt-in
 * subscriptions coalesce; a plain subscriber gets every event of a subject.
 */
class EverySubjectEventReachesNonCoalescingSubscriberIT {
    private String connector;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(connector);
    }

    private static TestDatabase twoEventsOfOneSubjectInOneBatch(String prefix) {
        TestDatabase db = TestPostgres.get().createDatabase(prefix);
        // one transaction, written before the connector starts: both rows land in one claimed batch
        db.execute("INSERT INTO events(type, subject, payload) VALUES "
            + "('supplier.connected', 'supplier:42', '{\"step\":1}'), "
            + "('supplier.activated', 'supplier:42', '{\"step\":2}')");
        return db;
    }

    private static Map<String, String> config(TestDatabase db, String prefix, boolean webhooksCoalesce) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "corpus.index,webhooks", 1);
        cfg.put("subscription.corpus.index.topic", prefix + "-index");
        cfg.put("subscription.corpus.index.coalesce", "true");
        cfg.put("subscription.webhooks.topic", prefix + "-hooks");
        cfg.put("subscription.webhooks.coalesce", Boolean.toString(webhooksCoalesce));
        return cfg;
    }

    @Test
    void thePlainSubscriberGetsBothEventsAndTheCoalescingOneGetsTheLatestCoveringBoth() {
        TestDatabase db = twoEventsOfOneSubjectInOneBatch("coalesce_plain");
        connector = "coalesce-plain";
        TestConnect.cluster().configureConnector(connector, config(db, "coalesce-plain", false));
        await().atMost(Duration.ofSeconds(30))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0);

        List<TestConnect.Received> hooks = TestConnect.consume(2, Duration.ofSeconds(30), "coalesce-plain-hooks");
        assertThat(hooks).extracting(r -> r.value().get("type").asText())
            .containsExactly("supplier.connected", "supplier.activated");

        assertThat(TestConnect.countRecords("coalesce-plain-index")).isEqualTo(1);
        TestConnect.Received index = TestConnect.consume(1, Duration.ofSeconds(30), "coalesce-plain-index").get(0);
        assertThat(index.value().get("type").asText()).isEqualTo("supplier.activated");
        List<Long> covered = List.of(index.value().get("coalesced_seqs").get(0).asLong(),
            index.value().get("coalesced_seqs").get(1).asLong());
        List<List<Object>> seqs = db.query("SELECT seq FROM events ORDER BY seq");
        assertThat(covered).containsExactly(((Number) seqs.get(0).get(0)).longValue(),
            ((Number) seqs.get(1).get(0)).longValue());
        // the covered row records where its event went for the coalescing subscription
        assertThat(db.query("SELECT fanout->'corpus.index'->>'coalesced_into' FROM events ORDER BY seq LIMIT 1")
            .get(0).get(0)).isEqualTo(seqs.get(1).get(0).toString());
    }

    @Test
    void negativeControlCoalescingEverySubscriberLosesTheEarlierFact() {
        TestDatabase db = twoEventsOfOneSubjectInOneBatch("coalesce_all");
        connector = "coalesce-all";
        TestConnect.cluster().configureConnector(connector, config(db, "coalesce-all", true));
        await().atMost(Duration.ofSeconds(30))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0);
        // the seed's bug, reproduced on purpose: supplier.connected never reaches webhooks
        assertThat(TestConnect.countRecords("coalesce-all-hooks")).isEqualTo(1);
        assertThat(TestConnect.consume(1, Duration.ofSeconds(30), "coalesce-all-hooks").get(0)
            .value().get("type").asText()).isEqualTo("supplier.activated");
    }
}
