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
 * {@code commitRecord(record, null)}: under {@code errors.tolerance=none} only an SMT filter can cause
 * it, so the row is stamped with {@code {"filtered": true}} for that subscription; under
 * {@code errors.tolerance=all} it may be a dropped record, so the row is NOT stamped and is retried.
 */
class NullMetadataIT {
    private String connector;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(connector);
    }

    /** Filters every record bound for the {@code audit} subscription's topic. */
    private static Map<String, String> withFilterOn(TestDatabase db, String auditTopic, String keptTopic) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "audit,kept", 1);
        cfg.put("subscription.audit.topic", auditTopic);
        cfg.put("subscription.kept.topic", keptTopic);
        cfg.put("transforms", "dropAudit");
        cfg.put("transforms.dropAudit.type", "org.apache.kafka.connect.transforms.Filter");
        cfg.put("transforms.dropAudit.predicate", "isAudit");
        cfg.put("predicates", "isAudit");
        cfg.put("predicates.isAudit.type", "org.apache.kafka.connect.transforms.predicates.TopicNameMatches");
        cfg.put("predicates.isAudit.pattern", auditTopic);
        return cfg;
    }

    @Test
    void underToleranceNoneAFilteredRecordIsStampedAsFiltered() {
        TestDatabase db = TestPostgres.get().createDatabase("null_meta_none");
        long seq = db.insertEvent("order.created", "order-1", "{}");
        connector = "null-meta-none";
        TestConnect.cluster().configureConnector(connector, withFilterOn(db, "nm-none-audit", "nm-none-kept"));

        await().atMost(Duration.ofSeconds(30))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == 1);
        List<List<Object>> row = db.query(
            "SELECT fanout->'audit'->>'filtered', fanout->'kept'->>'topic' FROM events WHERE seq = ?", seq);
        assertThat(row.get(0)).containsExactly("true", "nm-none-kept");
        assertThat(TestConnect.countRecords("nm-none-audit")).isZero();
    }

    @Test
    void underToleranceAllANullMetadataLeavesTheRowUnstampedAndRetriesIt() {
        TestDatabase db = TestPostgres.get().createDatabase("null_meta_all");
        long seq = db.insertEvent("order.created", "order-1", "{}");
        connector = "null-meta-all";
        Map<String, String> cfg = withFilterOn(db, "nm-all-audit", "nm-all-kept");
        cfg.put("errors.tolerance", "all");
        cfg.put("outbox.backoff.initial.ms", "100");
        cfg.put("outbox.backoff.max.ms", "200");
        cfg.put("outbox.max.attempts", "3");
        TestConnect.cluster().configureConnector(connector, cfg);

        // retried (attempts grow), never stamped, and finally poisoned with the reason
        await().atMost(Duration.ofSeconds(60))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL") == 1);
        List<List<Object>> row = db.query(
            "SELECT fanned_out_at, attempts, last_error FROM events WHERE seq = ?", seq);
        assertThat(row.get(0).get(0)).isNull();
        assertThat(((Number) row.get(0).get(1)).intValue()).isEqualTo(3);
        assertThat((String) row.get(0).get(2)).contains("audit").contains("errors.tolerance=all");
        // the kept subscription's record went out on every attempt: at-least-once, never lost
        assertThat(TestConnect.countRecords("nm-all-kept")).isEqualTo(3);
    }
}
