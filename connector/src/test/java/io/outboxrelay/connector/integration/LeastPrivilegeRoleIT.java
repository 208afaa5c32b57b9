package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The grants schemas/sql/outbox.sql ships are enough: a login role whose only privileges come from
 * the {@code outbox_relay} group runs the relay end to end. Guards against the relay quietly needing
 * more (DELETE, INSERT, a function, ownership) so that users end up running it as a superuser.
 */
class LeastPrivilegeRoleIT {
    private static final String CONNECTOR = "least-privilege";
    private static final String TOPIC = "least-privilege-orders";
    private static final String ROLE = "relay_lp_" + UUID.randomUUID().toString().substring(0, 8);
    private static final String PASSWORD = "lp-" + UUID.randomUUID();
    private static TestDatabase admin;
    private static TestDatabase asRelay;

    @BeforeAll
    static void createRole() {
        admin = TestPostgres.get().createDatabase("least_privilege");
        admin.execute("CREATE ROLE " + ROLE + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE outbox_relay");
        asRelay = new TestDatabase(admin.name(), admin.jdbcUrl(), ROLE, PASSWORD);
    }

    @AfterAll
    static void dropRole() {
        if (TestConnect.cluster().connectors().contains(CONNECTOR)) {
            TestConnect.cluster().deleteConnector(CONNECTOR);
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> relaySessions().isEmpty());
        admin.execute("DROP ROLE " + ROLE);
    }

    private static List<List<Object>> relaySessions() {
        return admin.query("SELECT usename::text FROM pg_stat_activity WHERE application_name LIKE ?",
            "outbox-relay:" + CONNECTOR + "%");
    }

    @Test
    void theRoleHoldsNothingButTheGroupsGrants() {
        assertThat(admin.query("SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles"
            + " WHERE rolname = ?", ROLE)).containsExactly(List.of(false, false, false, false));
        assertThat(admin.queryLong("SELECT count(*) FROM information_schema.role_table_grants WHERE grantee = ?",
            ROLE)).as("grants made to the role itself").isZero();
        assertThat(admin.query("SELECT privilege_type::text FROM information_schema.role_table_grants"
            + " WHERE grantee = 'outbox_relay' AND table_name = 'events' ORDER BY 1"))
            .containsExactly(List.of("SELECT"), List.of("UPDATE"));
        assertThat(admin.query("SELECT privilege_type::text FROM information_schema.role_table_grants"
            + " WHERE grantee = 'outbox_relay' AND table_name = 'events_replays' ORDER BY 1"))
            .as("replay requests (V6): read and leased, never made or deleted by the relay")
            .containsExactly(List.of("SELECT"), List.of("UPDATE"));
    }

    @Test
    void theRoleCannotDeleteInsertOrTruncate() throws SQLException {
        long seq = admin.insertEvent("order.created", "order-negative", "{}");
        try (Connection c = connectAsRelay(); Statement st = c.createStatement()) {
            for (String sql : List.of(
                "DELETE FROM events WHERE seq = " + seq,
                "INSERT INTO events(type, subject) VALUES ('order.created', 'x')",
                "TRUNCATE events",
                "ALTER TABLE events ADD COLUMN extra int")) {
                SQLException e = catchThrowableOfType(SQLException.class, () -> st.execute(sql));
                assertThat((Throwable) e).as(sql).isNotNull();
                assertThat(e.getSQLState()).as(sql + ": " + e.getMessage()).isIn("42501");
            }
            // what it is granted does work
            assertThat(st.executeUpdate("UPDATE events SET attempts = attempts WHERE seq = " + seq)).isEqualTo(1);
        }
        assertThat(admin.queryLong("SELECT count(*) FROM events WHERE seq = ?", seq)).isEqualTo(1);
        admin.execute("DELETE FROM events WHERE seq = " + seq); // keep the end-to-end count exact
    }

    @Test
    void aRelayRunningAsTheRoleFansOutEndToEnd() {
        Map<String, String> cfg = TestConnect.relayConfig(asRelay, "orders", 2);
        cfg.put("name", CONNECTOR);
        cfg.put("subscription.orders.topic", TOPIC);
        cfg.put("outbox.poison.topic", "least-privilege-poison");
        Reply validation = WorkerRest.validate(cfg);
        assertThat(validation.json().get("error_count").asInt()).as(validation.body()).isZero();
        assertThat(WorkerRest.put("connectors/" + CONNECTOR + "/config", cfg).status()).isEqualTo(201);

        admin.insertEvents(20, 5, "order.created", "order.paid");

        await().atMost(Duration.ofSeconds(30)).until(() -> admin.queryLong(
            "SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL AND subject LIKE 'subject-%'") == 20);
        assertThat(TestConnect.consume(20, Duration.ofSeconds(20), TOPIC)).hasSize(20);
        assertThat(admin.queryLong("SELECT count(*) FROM events WHERE fanout IS NULL AND subject LIKE 'subject-%'"))
            .isZero();
        // the relay really ran as the role, not as the test's superuser
        assertThat(relaySessions()).isNotEmpty().allSatisfy(row -> assertThat(row).containsExactly(ROLE));
        assertThat(TestConnect.cluster().connectorStatus(CONNECTOR).tasks())
            .allSatisfy(t -> assertThat(t.state()).isEqualTo("RUNNING"));

        // a replay (docs/replay.md) is served with the grants V6 gives the group
        long request = admin.queryLong("SELECT events_replay('orders', '-infinity', 'infinity')");
        await().atMost(Duration.ofSeconds(30)).until(() -> admin.queryLong(
            "SELECT count(*) FROM events_replays WHERE id = ? AND done_at IS NOT NULL", request) == 1);
        assertThat(TestConnect.consume(40, Duration.ofSeconds(20), TOPIC).stream()
            .filter(r -> Long.toString(request).equals(r.headers().get("event.replay")))
            .filter(r -> r.key().startsWith("subject-"))).hasSize(20);
        assertThat(admin.queryLong("SELECT count(*) FROM events_replays WHERE last_error IS NOT NULL")).isZero();
    }

    /**
     * The contract's least privilege: SELECT and UPDATE on the table and nothing else (no group, no grant on the
     * wake-up flag). Validation accepts it, the tasks never arm the flag they may not set and poll while quiet, so
     * rows written while they are quiet arrive with no sweep due (its interval is 10 minutes); with the grant given,
     * the tasks arm it (at their next sweep, OutboxRelayTaskTest; here at their restart by a new config). Before,
     * validation refused this role and a task failed at its first claim.
     */
    @Test
    void aRoleWithOnlySelectAndUpdateOnTheTableRelaysAndTakesUpTheFlagOnceGranted() throws Exception {
        String connector = CONNECTOR + "-table-only";
        String role = ROLE + "_t";
        TestDatabase db = TestPostgres.get().createDatabase("least_privilege_table_only");
        db.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + PASSWORD + "'; GRANT SELECT, UPDATE ON events TO "
            + role);
        try {
            Map<String, String> cfg = TestConnect.relayConfig(new TestDatabase(db.name(), db.jdbcUrl(), role, PASSWORD),
                "orders", 2);
            cfg.put("name", connector);
            cfg.put("subscription.orders.topic", TOPIC + "-table-only");
            cfg.put("outbox.sweep.interval.ms", "600000");
            cfg.put("outbox.poll.interval.ms", "100");
            Reply validation = WorkerRest.validate(cfg);
            assertThat(validation.json().get("error_count").asInt()).as(validation.body()).isZero();
            assertThat(WorkerRest.put("connectors/" + connector + "/config", cfg).status()).isEqualTo(201);
            TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(connector, 2, "not running");

            for (int round = 1; round <= 3; round++) {
                db.insertEvents(10, 5, "order.created");
                int expected = 10 * round;
                await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong(
                    "SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == expected);
            }
            assertThat(db.queryLong("SELECT last_value FROM events_wakeup")).as("never armed").isZero();
            assertThat(TestConnect.cluster().connectorStatus(connector).tasks())
                .allSatisfy(t -> assertThat(t.state()).isEqualTo("RUNNING"));

            db.execute("GRANT outbox_relay TO " + role);
            cfg.put("outbox.sweep.interval.ms", "599000");
            assertThat(WorkerRest.put("connectors/" + connector + "/config", cfg).status()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT last_value FROM events_wakeup") == 1);
            db.insertEvents(10, 5, "order.created");
            await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong(
                "SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == 40);
            assertThat(TestConnect.consume(40, Duration.ofSeconds(20), TOPIC + "-table-only")).hasSize(40);
        } finally {
            TestConnect.cluster().deleteConnector(connector);
            await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = ?", role) == 0);
            db.execute("DROP OWNED BY " + role + "; DROP ROLE " + role);
        }
    }

    /**
     * EXECUTE on pg_notification_queue_usage() revoked while the relay is quiet: the wake-up does not use it
     * (the trigger reads the queue, as its owner), so the tasks keep running and relaying.
     */
    @Test
    void aQuietRelayKeepsRelayingWhenTheQueueUsageFunctionIsRevoked() {
        String connector = CONNECTOR + "-revoked";
        TestDatabase db = TestPostgres.get().createDatabase("least_privilege_revoked");
        Map<String, String> cfg = TestConnect.relayConfig(new TestDatabase(db.name(), db.jdbcUrl(), ROLE, PASSWORD),
            "orders", 2);
        cfg.put("name", connector);
        cfg.put("subscription.orders.topic", TOPIC + "-revoked");
        cfg.put("outbox.sweep.interval.ms", "600000");
        assertThat(WorkerRest.put("connectors/" + connector + "/config", cfg).status()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT last_value FROM events_wakeup") == 1);
        db.execute("REVOKE EXECUTE ON FUNCTION pg_notification_queue_usage() FROM PUBLIC");
        try {
            await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(2)) // a few looks
                .until(() -> TestConnect.cluster().connectorStatus(connector).tasks().stream()
                    .allMatch(task -> task.state().equals("RUNNING")));
            db.insertEvents(10, 5, "order.created");
            await().atMost(Duration.ofSeconds(20)).until(() -> TestConnect.countRecords(TOPIC + "-revoked") == 10);
            assertThat(TestConnect.cluster().connectorStatus(connector).tasks())
                .allSatisfy(task -> assertThat(task.state()).isEqualTo("RUNNING"));
        } finally {
            TestConnect.cluster().deleteConnector(connector);
            db.execute("GRANT EXECUTE ON FUNCTION pg_notification_queue_usage() TO PUBLIC");
        }
    }

    private static Connection connectAsRelay() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", ROLE);
        p.setProperty("password", PASSWORD);
        return DriverManager.getConnection(admin.jdbcUrl(), p);
    }
}
