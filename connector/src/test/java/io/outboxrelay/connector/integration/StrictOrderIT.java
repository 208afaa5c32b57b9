package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * outbox.ordering=strict on a real worker (guarantee 6, docs/ordering.md): a subject's row that fails and is retried
 * reaches the subscriber before the subject's later rows, and a poisoned row lets them go; beside it the negative
 * control, the default best-effort order, which delivers order.paid before the failed order.created (guarantee 4).
 * The failure is a transform that refuses a record once, or the broker refusing a record, under
 * errors.tolerance=all (the row backs off).
 */
class StrictOrderIT {
    private String connector;

    @AfterEach
    void deleteConnector() {
        if (connector != null) {
            TestConnect.cluster().deleteConnector(connector);
        }
    }

    private Map<String, String> config(TestDatabase db, String name, String ordering) {
        connector = name;
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", name + "-orders");
        cfg.put("outbox.ordering", ordering);
        cfg.put("errors.tolerance", "all");
        cfg.put("transforms", "fail");
        cfg.put("transforms.fail.type", FailingOnceTransform.class.getName());
        cfg.put("outbox.backoff.initial.ms", "1000");
        cfg.put("outbox.backoff.max.ms", "1000");
        cfg.put("outbox.lease.ms", "600000"); // a row must be released to be retried
        return cfg;
    }

    /**
     * In one transaction: order-1 created (its record fails {@code fail}: once or always), paid, shipped; order-2
     * created, paid.
     */
    private static void insertTwoOrders(TestDatabase db, String fail) {
        db.execute("INSERT INTO events(type, subject, headers) VALUES"
            + " ('order.created', 'order-1', jsonb_build_object('test.fail', '" + fail + "')),"
            + " ('order.paid', 'order-1', NULL), ('order.shipped', 'order-1', NULL),"
            + " ('order.created', 'order-2', NULL), ('order.paid', 'order-2', NULL)");
    }

    private static long count(TestDatabase db, String where) {
        return db.queryLong("SELECT count(*) FROM events WHERE " + where);
    }

    /** The seqs of {@code subject}'s records on the topic, in the order a consumer reads them. */
    private static List<Long> seqsOf(List<TestConnect.Received> records, String subject) {
        return records.stream().filter(r -> subject.equals(r.key())).map(TestConnect.Received::seq).toList();
    }

    private List<TestConnect.Received> relayUntilDelivered(TestDatabase db, Map<String, String> cfg, int rows) {
        TestConnect.cluster().configureConnector(connector, cfg);
        await().atMost(Duration.ofSeconds(20)).until(() -> count(db, "fanned_out_at IS NOT NULL") == rows);
        return TestConnect.consume(rows, Duration.ofSeconds(20), connector + "-orders");
    }

    /** The two orders relayed with {@code ordering}, order-1's created failing once: order-1's seqs as consumed. */
    private List<Long> twoOrdersCreatedFailingOnce(String name, String ordering) {
        TestDatabase db = TestPostgres.get().createDatabase(name.replace('-', '_'));
        insertTwoOrders(db, "once");

        List<TestConnect.Received> records = relayUntilDelivered(db, config(db, name, ordering), 5);

        assertThat(db.queryLong("SELECT attempts FROM events WHERE seq = 1")).as("created failed once").isEqualTo(2);
        assertThat(records).hasSize(5);
        assertThat(seqsOf(records, "order-2")).containsExactly(4L, 5L);
        return seqsOf(records, "order-1");
    }

    @Test
    void withStrictOrderAFailedThenRetriedRowArrivesBeforeTheLaterRowsOfItsSubject() {
        assertThat(twoOrdersCreatedFailingOnce("strict-order", "strict")).containsExactly(1L, 2L, 3L);
    }

    @Test
    void theDefaultOrderDeliversPaidBeforeTheCreatedThatFailed() {
        assertThat(twoOrdersCreatedFailingOnce("best-effort-order", "best-effort"))
            .as("guarantee 4: a failed row is retried after its subject's later rows").containsExactly(2L, 3L, 1L);
    }

    /**
     * The failure at the broker, acknowledged asynchronously: order-1's created is over the topic's
     * max.message.bytes. While it backs off, order-2 flows and order-1's paid waits; once the topic takes larger
     * records, the retry is accepted and paid follows it.
     */
    @Test
    void withStrictOrderARecordTheBrokerRefusedHoldsItsSubjectBackUntilItsRetryIsAccepted() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("strict_broker");
        Map<String, String> cfg = config(db, "strict-broker", "strict");
        cfg.put("outbox.max.attempts", "20");
        String topic = connector + "-orders";
        TestConnect.cluster().kafka().createTopic(topic, 1, 1, Map.of("max.message.bytes", "1500"));
        db.execute("INSERT INTO events(type, subject, payload) VALUES"
            + " ('order.created', 'order-1', jsonb_build_object('blob', repeat('x', 3000))),"
            + " ('order.paid', 'order-1', '{}'), ('order.created', 'order-2', '{}')");
        TestConnect.cluster().configureConnector(connector, cfg);

        await().atMost(Duration.ofSeconds(30)).until(() -> count(db, "seq = 1 AND last_error IS NOT NULL") == 1
            && count(db, "seq = 3 AND fanned_out_at IS NOT NULL") == 1);
        assertThat(count(db, "seq = 2 AND lease_owner IS NULL AND attempts = 0")).as("paid never claimed").isOne();
        try (Admin admin = TestConnect.cluster().kafka().createAdminClient()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(
                new AlterConfigOp(new ConfigEntry("max.message.bytes", "1000000"), AlterConfigOp.OpType.SET))))
                .all().get();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> count(db, "fanned_out_at IS NOT NULL") == 3);

        List<TestConnect.Received> records = TestConnect.consume(3, Duration.ofSeconds(20), topic);
        assertThat(seqsOf(records, "order-1")).containsExactly(1L, 2L);
        assertThat(db.queryLong("SELECT attempts FROM events WHERE seq = 1")).isGreaterThan(1);
    }

    @Test
    void aPoisonedRowReleasesItsSubjectAndIsNamedInTheMetrics() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("strict_poison");
        insertTwoOrders(db, "always");
        Map<String, String> cfg = config(db, "strict-poison", "strict");
        cfg.put("outbox.max.attempts", "2");
        cfg.put("outbox.sweep.interval.ms", "600000"); // the poisoning itself must bring the claim of paid

        List<TestConnect.Received> records = relayUntilDelivered(db, cfg, 4);

        assertThat(count(db, "seq = 1 AND poisoned_at IS NOT NULL")).isOne();
        assertThat(seqsOf(records, "order-1")).containsExactly(2L, 3L);
        assertThat(count(db, "seq = 2 AND fanned_out_at >= (SELECT poisoned_at FROM events WHERE seq = 1)"))
            .as("paid went out only once created was poisoned").isOne();
        assertThat(RelayMetricsAndRetentionIT.metric(connector, "strict-subjects-released-total")).isEqualTo(1);
        assertThat(RelayMetricsAndRetentionIT.metric(connector, "strict-last-released-seq")).isEqualTo(1);
    }

    @Test
    void validationRefusesStrictOrderOnATableWithoutTheSubjectIndex() {
        TestDatabase db = TestPostgres.get().createDatabase("strict_no_index");
        Map<String, String> cfg = config(db, "strict-no-index", "strict");
        connector = null; // validated only
        cfg.put("name", "strict-no-index");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(cfg), "outbox.ordering")).isEmpty();

        db.execute("DROP INDEX events_subject_pending_idx");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(cfg), "outbox.ordering")).singleElement().asString()
            .contains("outbox.ordering=strict needs a partial index on (hashtext(subject::text), seq)").contains("V7");
        // an index on the subject itself is not it: it would fail the application's insert of a long subject
        db.execute("CREATE INDEX events_subject_itself ON events (subject, seq)"
            + " WHERE fanned_out_at IS NULL AND poisoned_at IS NULL");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(cfg), "outbox.ordering")).singleElement().asString()
            .contains("hashtext");
        cfg.put("outbox.ordering", "best-effort");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(cfg), "outbox.ordering")).as("the default needs none")
            .isEmpty();
    }
}
