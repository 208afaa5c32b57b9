package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.CuttingProxy;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The relay keeps working and loses nothing when rows or the broker misbehave: oversized rows are
 * poisoned before producing, broker rejections are retried alone with backoff and then poisoned, a row
 * that kills the task is poisoned instead of crash-looping, and requeue delivers a fixed row.
 */
class RelayFailureHandlingIT {
    private String connector;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(connector);
    }

    private static long stamped(TestDatabase db) {
        return db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL");
    }

    private static long attempts(TestDatabase db, long seq) {
        return db.queryLong("SELECT attempts FROM events WHERE seq = ?", seq);
    }

    private static long poisoned(TestDatabase db) {
        return db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL");
    }

    /** Four ordinary rows around one of ~5 KB; returns the big row's seq. */
    private static long insertBatchWithOneOversizedRow(TestDatabase db) {
        db.insertEvents(2, 2, "order.created");
        long big = db.insertEvent("order.created", "big-1", "{\"blob\":\"" + "x".repeat(5_000) + "\"}");
        db.insertEvents(2, 2, "order.created");
        return big;
    }

    /** One relay task named {@code name}, subscription "orders" on {@code <name>-orders}. */
    private Map<String, String> ordersConfig(TestDatabase db, String name) {
        connector = name;
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", name + "-orders");
        return cfg;
    }

    /** {@link #ordersConfig} with a 2 KB record limit. */
    private Map<String, String> smallRecordLimitConfig(TestDatabase db, String name) {
        Map<String, String> cfg = ordersConfig(db, name);
        cfg.put("outbox.max.record.bytes", "2048");
        return cfg;
    }

    /**
     * A relay on topic {@code <name>-orders}, which refuses messages over 1500 bytes, under
     * errors.tolerance=all (a refused record is retried, not fatal), with short backoffs and a lease too
     * long to expire during the test: a row must be released to be retried.
     */
    private Map<String, String> brokerRejectsBigRowsConfig(TestDatabase db, String name) {
        TestConnect.cluster().kafka().createTopic(name + "-orders", 1, 1, Map.of("max.message.bytes", "1500"));
        connector = name;
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", name + "-orders");
        cfg.put("errors.tolerance", "all");
        cfg.put("outbox.backoff.initial.ms", "200");
        cfg.put("outbox.backoff.max.ms", "1000");
        cfg.put("outbox.lease.ms", "600000");
        return cfg;
    }

    /** A row whose record is over the 1500 bytes of {@link #brokerRejectsBigRowsConfig}'s topic. */
    private static long insertRowTheBrokerRejects(TestDatabase db) {
        return db.insertEvent("order.created", "big-1", "{\"blob\":\"" + "x".repeat(3_000) + "\"}");
    }

    /**
     * A test trigger named {@code name}: an UPDATE of a row matching {@code when} fails with a retriable
     * serialization failure (40001) while {@code refuseIf} holds. It also counts, in the sequence
     * {@code name}, how often it was asked (read with {@link #timesAsked}): {@code refuseIf} may test
     * {@code asked}, this call's number.
     */
    private static void refuseUpdates(TestDatabase db, String name, String when, String refuseIf) {
        createTimesAsked(db);
        db.execute("""
            CREATE SEQUENCE %1$s;
            CREATE FUNCTION %1$s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $fn$
            DECLARE
              asked bigint := nextval('%1$s');
            BEGIN
              IF %3$s THEN
                RAISE EXCEPTION 'test: %1$s refused this update' USING ERRCODE = '40001';
              END IF;
              RETURN NEW;
            END;
            $fn$;
            CREATE TRIGGER %1$s BEFORE UPDATE ON events FOR EACH ROW WHEN (%2$s) EXECUTE FUNCTION %1$s();
            """.formatted(name, when, refuseIf));
    }

    /** How often the trigger of {@link #refuseUpdates} was asked (also from SQL: {@code times_asked(name)}). */
    private static long timesAsked(TestDatabase db, String name) {
        return db.queryLong("SELECT times_asked(?)", name);
    }

    private static void createTimesAsked(TestDatabase db) {
        db.execute("""
            CREATE OR REPLACE FUNCTION times_asked(seq_name text) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER AS $fn$
            DECLARE
              n bigint;
            BEGIN
              EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %I', seq_name) INTO n;
              RETURN n;
            END;
            $fn$;
            """);
    }

    @Test
    void anOversizedRowIsPoisonedBeforeProducingAndRequeueDeliversItOnceTheLimitIsRaised() {
        TestDatabase db = TestPostgres.get().createDatabase("oversized");
        long big = insertBatchWithOneOversizedRow(db);
        Map<String, String> cfg = smallRecordLimitConfig(db, "oversized");
        cfg.put("outbox.poison.topic", "oversized-poison");
        TestConnect.cluster().configureConnector(connector, cfg);

        await().atMost(Duration.ofSeconds(30)).until(() -> stamped(db) == 4 && poisoned(db) == 1);
        String reason = (String) db.query("SELECT last_error FROM events WHERE seq = ?", big).get(0).get(0);
        assertThat(reason).contains("outbox.max.record.bytes=2048").contains("events_requeue(" + big + ")");
        assertThat(TestConnect.countRecords("oversized-orders")).isEqualTo(4);
        List<TestConnect.Received> poison = TestConnect.consume(1, Duration.ofSeconds(30), "oversized-poison");
        assertThat(poison).hasSize(1);
        assertThat(poison.get(0).value().get("seq").asLong()).isEqualTo(big);
        assertThat(poison.get(0).value().get("reason").asText()).contains("outbox.max.record.bytes");

        cfg.put("outbox.max.record.bytes", "100000");
        Object reconfiguredAt = db.query("SELECT now()").get(0).get(0);
        TestConnect.cluster().configureConnector(connector, cfg);
        // requeue once the task with the new limit runs and the old one is gone (its LISTEN session too)
        String sessions = "SELECT count(*) FROM pg_stat_activity WHERE starts_with(application_name, 'outbox-relay:oversized-0@')"
            + " AND backend_start %s ?";
        await().atMost(Duration.ofSeconds(30)).until(() ->
            db.queryLong(sessions.formatted("<"), reconfiguredAt) == 0
                && db.queryLong(sessions.formatted(">"), reconfiguredAt) > 0);
        assertThat(db.query("SELECT events_requeue(?)", big).get(0).get(0)).isEqualTo(true);
        await().atMost(Duration.ofSeconds(30)).until(() -> stamped(db) == 5);
        assertThat(TestConnect.countRecords("oversized-orders")).isEqualTo(5);
        assertThat(TaskState.running(connector)).isTrue();
    }

    @Test
    void aRecordTheBrokerRejectsIsRetriedAloneWithBackoffAndPoisonedWhileOtherRowsFlow() {
        TestDatabase db = TestPostgres.get().createDatabase("rejected");
        long big = insertRowTheBrokerRejects(db);
        Map<String, String> cfg = brokerRejectsBigRowsConfig(db, "rejected");
        TestConnect.cluster().configureConnector(connector, cfg);
        for (int i = 0; i < 5; i++) {
            db.insertEvents(20, 5, "order.created"); // other rows keep flowing during the retries
        }

        await().atMost(Duration.ofSeconds(60)).until(() -> poisoned(db) == 1 && stamped(db) == 100);
        List<List<Object>> row = db.query("SELECT attempts, last_error, fanned_out_at FROM events WHERE seq = ?", big);
        assertThat(((Number) row.get(0).get(0)).intValue()).isEqualTo(5);
        assertThat((String) row.get(0).get(1)).contains("errors.tolerance=all");
        assertThat(row.get(0).get(2)).isNull();
        assertThat(TestConnect.countRecords("rejected-orders")).isEqualTo(100);
    }

    @Test
    void aReleaseThatFailsLosesNoStampOfTheRowsAcknowledgedWithIt() {
        // One full claim: a row the broker rejects and 20 it accepts. Test triggers refuse the first release
        // of the rejected row and every stamp until then, and make each UPDATE statement take 0.5 s (so the
        // claim that follows the full one lets every acknowledgement arrive): the 20 acknowledged rows are
        // waiting in the task, to be stamped, in the pass whose release of the rejected row fails. They must
        // then be stamped once, not forgotten (and, their leases given back, delivered a second time).
        TestDatabase db = TestPostgres.get().createDatabase("release_fails");
        refuseUpdates(db, "release_attempts", "NEW.last_error IS NOT NULL AND NEW.lease_owner IS NULL"
            + " AND NEW.poisoned_at IS NULL", "asked = 1");
        refuseUpdates(db, "stamp_attempts", "OLD.fanned_out_at IS NULL AND NEW.fanned_out_at IS NOT NULL",
            "times_asked('release_attempts') < 1");
        db.execute("""
            CREATE FUNCTION slow_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
            BEGIN
              PERFORM pg_sleep(0.5);
              RETURN NULL;
            END;
            $fn$;
            CREATE TRIGGER slow_update BEFORE UPDATE ON events FOR EACH STATEMENT EXECUTE FUNCTION slow_update();
            """);
        insertRowTheBrokerRejects(db);
        db.insertEvents(20, 5, "order.created");
        Map<String, String> cfg = brokerRejectsBigRowsConfig(db, "release-fails");
        cfg.put("outbox.batch.size", "21");
        cfg.put("outbox.max.attempts", "2");
        TestConnect.cluster().configureConnector(connector, cfg);

        await().atMost(Duration.ofSeconds(60)).until(() -> poisoned(db) == 1 && stamped(db) == 20);
        assertThat(timesAsked(db, "release_attempts")).as("the refused release happened").isGreaterThanOrEqualTo(1);
        assertThat(db.queryLong("SELECT max(attempts) FROM events WHERE poisoned_at IS NULL"))
            .as("no acknowledged row was claimed again").isEqualTo(1);
        assertThat(TestConnect.countRecords("release-fails-orders")).isEqualTo(20);
    }

    /**
     * Stamps fail while the task holds acknowledged rows, so every pass fails and the task backs off for
     * longer than the lease (backoff cap 3 s, lease 1.5 s). The leases of the rows it holds must be extended
     * through the backoff: a lapsed lease lets another claimer take rows this task will still stamp.
     */
    @Test
    void leasesOfHeldRowsAreExtendedWhileTheTaskBacksOff() {
        TestDatabase db = TestPostgres.get().createDatabase("backoff_leases");
        refuseUpdates(db, "stamp_attempts", "OLD.fanned_out_at IS NULL AND NEW.fanned_out_at IS NOT NULL",
            "true");
        db.insertEvents(30, 5, "order.created");
        Map<String, String> cfg = ordersConfig(db, "backoff-leases");
        cfg.put("outbox.lease.ms", "1500");
        cfg.put("outbox.backoff.initial.ms", "1000");
        cfg.put("outbox.backoff.max.ms", "3000");
        TestConnect.cluster().configureConnector(connector, cfg);

        assertThat(TestConnect.consume(30, Duration.ofSeconds(30), "backoff-leases-orders")).hasSize(30);
        await().atMost(Duration.ofSeconds(30)).until(() -> timesAsked(db, "stamp_attempts") >= 3);
        // by now the task backs off up to 3 s at a time; in 6 s no held row's lease may lapse
        String lapsed = "SELECT count(*) FROM events WHERE fanned_out_at IS NULL"
            + " AND (lease_until IS NULL OR lease_until < now())";
        await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(8))
            .pollInterval(Duration.ofMillis(200)).until(() -> db.queryLong(lapsed) == 0);

        db.execute("DROP TRIGGER stamp_attempts ON events");
        await().atMost(Duration.ofSeconds(30)).until(() -> stamped(db) == 30);
        assertThat(db.queryLong("SELECT max(attempts) FROM events")).as("no row was claimed twice").isEqualTo(1);
        assertThat(TestConnect.countRecords("backoff-leases-orders")).isEqualTo(30);
    }

    /**
     * The producer holds the records for two minutes before sending them (linger.ms), so every claimed row
     * is in flight, its records handed to Connect and not acknowledged, when the connector is stopped. The graceful stop releases them and gives their attempt back:
     * their records were handed to Connect but no failure of theirs stopped the task, so repeated stops
     * during broker trouble must not push healthy rows towards poisoning. The row that kills its task
     * (the test below) keeps its attempt.
     */
    @Test
    void aGracefulStopWithAcknowledgementsOutstandingGivesTheAttemptsBack() {
        TestDatabase db = TestPostgres.get().createDatabase("slow_acks_stop");
        db.insertEvents(50, 5, "order.created");
        Map<String, String> cfg = ordersConfig(db, "slow-acks");
        cfg.put("outbox.batch.size", "20");
        cfg.put("outbox.batch.max.size", "20"); // claims of a fixed size: exactly two batches in flight
        cfg.put("outbox.max.inflight.batches", "2");
        cfg.put("producer.override.linger.ms", "120000");
        cfg.put("producer.override.batch.size", "1000000");
        TestConnect.cluster().configureConnector(connector, cfg);

        String held = "SELECT count(*) FROM events WHERE lease_owner IS NOT NULL AND attempts = 1";
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong(held) == 40);
        TestConnect.cluster().stopConnector(connector);

        await().atMost(Duration.ofSeconds(30))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE lease_owner IS NOT NULL") == 0);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE attempts > 0"))
            .as("rows released at a graceful stop keep no attempt").isZero();
        assertThat(stamped(db)).isZero();
    }

    @Test
    void aRowThatKillsTheTaskFiveTimesIsPoisonedInsteadOfCrashLooping() {
        TestDatabase db = TestPostgres.get().createDatabase("killer");
        db.insertEvents(3, 3, "order.created");
        long killer = db.insertEvent("test.explode", "boom-1", "{}");
        db.insertEvents(3, 3, "order.created");
        connector = "killer";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", "killer-orders");
        cfg.put("transforms", "explode");
        cfg.put("transforms.explode.type", ExplodingTransform.class.getName());
        TestConnect.cluster().configureConnector(connector, cfg);

        await().atMost(Duration.ofSeconds(30)).until(() -> TaskState.failed(connector));
        int restarts = 0;
        while (poisoned(db) == 0 && restarts < 10) {
            long before = attempts(db, killer);
            TestConnect.cluster().restartTask(connector, 0);
            restarts++;
            await().atMost(Duration.ofSeconds(30))
                .until(() -> poisoned(db) == 1 || (attempts(db, killer) > before && TaskState.failed(connector)));
        }
        int failures = restarts; // the first failure came before any restart; the last restart poisoned
        assertThat(failures).isEqualTo(5);
        await().atMost(Duration.ofSeconds(30)).until(() -> stamped(db) == 6);
        String reason = (String) db.query("SELECT last_error FROM events WHERE seq = ?", killer).get(0).get(0);
        assertThat(reason).contains("claimed 6 times");
        assertThat(TaskState.running(connector)).isTrue();
        // the rows that shared the killer's batch were retried alone and never poisoned
        assertThat(db.queryLong("SELECT max(attempts) FROM events WHERE type <> 'test.explode'")).isLessThanOrEqualTo(2);
        Set<Long> seqs = new HashSet<>();
        TestConnect.consume(6, Duration.ofSeconds(30), "killer-orders").forEach(r -> seqs.add(r.seq()));
        assertThat(seqs).hasSize(6).doesNotContain(killer);
    }

    @Test
    void aPoisonWriteThatFailsStrandsNoneOfItsBatch() {
        // the first attempt to poison a row fails (a retriable serialization failure from a test trigger);
        // the four good rows claimed with it must still be delivered, not held by the task as "in flight"
        // records it never handed to Connect
        TestDatabase db = TestPostgres.get().createDatabase("poison_write_fails");
        refuseUpdates(db, "poison_write_attempts", "OLD.poisoned_at IS NULL AND NEW.poisoned_at IS NOT NULL",
            "asked = 1");
        long big = insertBatchWithOneOversizedRow(db);
        Map<String, String> cfg = smallRecordLimitConfig(db, "poison-write-fails");
        cfg.put("outbox.backoff.initial.ms", "200");
        cfg.put("outbox.lease.ms", "600000"); // a stranded row would stay leased for the whole test
        TestConnect.cluster().configureConnector(connector, cfg);

        await().atMost(Duration.ofSeconds(30)).until(() -> stamped(db) == 4 && poisoned(db) == 1);
        assertThat(timesAsked(db, "poison_write_attempts")).as("the refused write happened").isGreaterThanOrEqualTo(2);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE seq = ? AND poisoned_at IS NOT NULL", big))
            .isEqualTo(1);
        assertThat(TestConnect.countRecords("poison-write-fails-orders")).isEqualTo(4);
        assertThat(db.queryLong("SELECT max(attempts) FROM events WHERE poisoned_at IS NULL"))
            .as("the failed claim's attempt was given back: its rows never reached Connect").isEqualTo(1);
        assertThat(TaskState.running(connector)).isTrue();
    }

    @Test
    void terminatedDatabaseSessionsAreRecoveredFromAndNothingIsLost() {
        // The relay's sessions are terminated in two phases. First without pause for 2 s from the first session
        // of a starting task: the kills land while the tasks start (their pools open their first sessions) and
        // back off; a pool left unable to open sessions claimed nothing for minutes (seen in CI). Then every
        // 200 ms while the backlog drains, row updates slowed to ~2 ms so the drain outlasts the kills on any
        // machine: they land in claims, stamps and lease extensions.
        TestDatabase db = TestPostgres.get().createDatabase("terminated");
        connector = "terminated";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 2);
        cfg.put("subscription.orders.topic", "terminated-orders");
        cfg.put("outbox.backoff.initial.ms", "100");
        cfg.put("outbox.backoff.max.ms", "1000");
        cfg.put("outbox.batch.size", "50");
        for (int i = 0; i < 6; i++) {
            db.insertEvents(500, 50, "order.created");
        }
        db.throttleRowUpdates("events", 2_000);
        TestConnect.cluster().configureConnector(connector, cfg);

        long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long killedInStorm = 0;
        while (killedInStorm == 0 && System.nanoTime() < giveUp) {
            killedInStorm += terminateRelaySessions(db);
        }
        assertThat(killedInStorm).as("sessions were terminated while the tasks started").isPositive();
        long stormEnds = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (System.nanoTime() < stormEnds) {
            terminateRelaySessions(db);
        }

        AtomicInteger killsMidDrain = new AtomicInteger();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            long done = stamped(db);
            if (done > 0 && done < 3_000 && terminateRelaySessions(db) > 0) {
                killsMidDrain.incrementAndGet();
            }
            return killsMidDrain.get() == 10 || done == 3_000;
        });
        assertThat(killsMidDrain).as("sessions were terminated while the backlog drained").hasValue(10);
        db.unthrottleRowUpdates("events");

        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> stamped(db) == 3_000);
        } catch (RuntimeException e) {
            System.err.println("DEBUG rows: " + db.query("SELECT fanned_out_at IS NULL, poisoned_at IS NULL, "
                + "lease_owner, attempts, count(*) FROM events GROUP BY 1, 2, 3, 4"));
            TestConnect.cluster().connectorStatus(connector).tasks().forEach(t ->
                System.err.println("DEBUG task " + t.id() + " " + t.state() + " " + t.trace()));
            throw e;
        }
        Set<String> ids = new HashSet<>();
        TestConnect.consume(3_000, Duration.ofSeconds(60), "terminated-orders").forEach(r -> ids.add(r.id()));
        assertThat(ids).hasSize(3_000);
        assertThat(db.queryLong("SELECT max(attempts) FROM events"))
            .as("a claim whose result died with its session gave its attempt back: no row moved towards poisoning")
            .isEqualTo(1);
        assertThat(TaskState.running(connector)).isTrue();
    }

    @Test
    void aRowWhoseClaimsAlwaysLoseTheirResultIsPoisonedWhileItsBatchIsDelivered() throws Exception {
        // The relay reaches PostgreSQL through a TCP relay that cuts any session the moment the server sends a
        // row carrying a marker: every claim that reads that row commits (the lease, the attempt) and then
        // loses its result. Once its count passes outbox.max.attempts the claim returns it without its payload
        // (so without the marker) and the task poisons it; the rows claimed with it must still be delivered
        // (each alone, after two losses).
        TestDatabase db = TestPostgres.get().createDatabase("lost_result");
        db.insertEvents(4, 4, "order.created");
        long lost = db.insertEvent("order.created", "lost-1", "{\"marker\":\"CUT-HERE-7f3a\"}");
        db.insertEvents(4, 4, "order.created");
        try (CuttingProxy proxy = CuttingProxy.inFrontOf(db.jdbcUrl(), CuttingProxy.resultsContaining("CUT-HERE-7f3a"))) {
            connector = "lost-result";
            Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
            cfg.put("connection.url", proxy.through(db.jdbcUrl()));
            cfg.put("subscription.orders.topic", "lost-result-orders");
            cfg.put("outbox.backoff.initial.ms", "100");
            cfg.put("outbox.backoff.max.ms", "500");
            TestConnect.cluster().configureConnector(connector, cfg);

            await().atMost(Duration.ofSeconds(60)).until(() -> stamped(db) == 8 && poisoned(db) == 1);
            assertThat(proxy.cuts()).as("claims lost their result").isGreaterThanOrEqualTo(5);
            assertThat((String) db.query("SELECT last_error FROM events WHERE seq = ?", lost).get(0).get(0))
                .contains("claimed 6 times").contains("the claim's result was lost with the database connection");
            Set<Long> seqs = new HashSet<>();
            TestConnect.consume(8, Duration.ofSeconds(30), "lost-result-orders").forEach(r -> seqs.add(r.seq()));
            assertThat(seqs).hasSize(8).doesNotContain(lost);
            assertThat(TaskState.running(connector)).isTrue();
        }
    }

    private static long terminateRelaySessions(TestDatabase db) {
        return db.queryLong("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            + "WHERE application_name LIKE 'outbox-relay:%' AND datname = current_database()");
    }

    @Test
    void badInputGetsAClearOutcomeAndLosesNothing() {
        TestDatabase db = TestPostgres.get().createDatabase("bad_input");
        db.execute("INSERT INTO events(type, subject, headers) VALUES ('order.created', 'h-1', '[1,2]')");
        db.execute("INSERT INTO events(type, subject, headers) VALUES ('order.created', 'h-2', "
            + "'{\"traceparent\":\"00-ab-01\",\"n\":1,\"o\":{\"k\":true}}')");
        db.execute("INSERT INTO events(type, subject, payload) VALUES ('order.created', 'p-1', '[1,2,3]')");
        db.execute("INSERT INTO events(type, subject) VALUES ('nobody.wants.this', 'u-1')");
        // a writer's headers may not pose as the relay's own: consumers dedupe on event.id
        db.execute("INSERT INTO events(type, subject, headers) VALUES ('order.created', 'f-1', "
            + "'{\"traceparent\":\"00-cd-01\",\"event.id\":\"forged\"}')");
        connector = "bad-input";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", "bad-input-orders");
        cfg.put("subscription.orders.event.types", "order.*");
        TestConnect.cluster().configureConnector(connector, cfg);

        await().atMost(Duration.ofSeconds(30)).until(() -> stamped(db) == 3 && poisoned(db) == 2);
        assertThat((String) db.query("SELECT last_error FROM events WHERE subject = 'h-1'").get(0).get(0))
            .contains("headers must be a JSON object");
        assertThat((String) db.query("SELECT last_error FROM events WHERE subject = 'f-1'").get(0).get(0))
            .contains("'event.id'").contains("events_requeue(");
        assertThat(db.query("SELECT fanout::text FROM events WHERE subject = 'u-1'").get(0).get(0)).isEqualTo("{}");
        List<TestConnect.Received> received = TestConnect.consume(2, Duration.ofSeconds(30), "bad-input-orders");
        TestConnect.Received headers = received.stream().filter(r -> r.key().equals("h-2")).findFirst().orElseThrow();
        assertThat(headers.headers()).containsEntry("traceparent", "00-ab-01").containsEntry("n", "1")
            .containsEntry("o", "{\"k\": true}");
        assertThat(received).extracting(TestConnect.Received::key).doesNotContain("f-1");
        TestConnect.Received array = received.stream().filter(r -> r.key().equals("p-1")).findFirst().orElseThrow();
        assertThat(array.value().get("payload").asText()).isEqualTo("[1, 2, 3]");
    }

    /** Task state through the REST API, as an operator sees it. */
    static final class TaskState {
        static boolean failed(String connector) {
            return state(connector).equals("FAILED");
        }

        static boolean running(String connector) {
            return state(connector).equals("RUNNING");
        }

        private static String state(String connector) {
            ConnectorStateInfo info = TestConnect.cluster().connectorStatus(connector);
            return info.tasks().isEmpty() ? "NONE" : info.tasks().get(0).state();
        }
    }
}
