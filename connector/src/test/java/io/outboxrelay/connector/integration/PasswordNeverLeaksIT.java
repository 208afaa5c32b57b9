package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.PostgresServer;
import io.outboxrelay.testsupport.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code connection.password} is a secret: a canary password, really used (the server demands SCRAM
 * authentication), must not show up in a validation reply, a connector or task status, a failed task's
 * trace, or anything the worker, the pool, the driver or the connector logs, whether the relay runs,
 * is refused for a wrong password, or cannot reach the server at all.
 *
 * <p>Connect itself returns connector and task configs as stored ({@code GET /connectors/<name>/config},
 * {@code /tasks}); {@link #connectReturnsStoredConfigsAsGiven} pins that down, because it is why the
 * README tells users to pass the password through a ConfigProvider.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PasswordNeverLeaksIT {
    private static final String CANARY = "CANARY-" + UUID.randomUUID();
    private static final String WRONG_CANARY = "CANARY-wrong-" + UUID.randomUUID();
    /** connection.ssl.password rides along in every config (no client key here, so the driver never needs it). */
    private static final String SSL_CANARY = "CANARY-ssl-" + UUID.randomUUID();
    private static final String ROLE = "relay_leak";
    /** Same password, own role: rotating its password leaves the relay running as {@link #ROLE} alone. */
    private static final String ROTATED_ROLE = "relay_rotated";
    private static final String RUNNING = "leak-running";
    private static final String REFUSED = "leak-refused";
    private static LocalPostgres postgres;
    private static TestDatabase admin;
    private static LogCapture log;

    @BeforeAll
    static void startServerDemandingPasswords() {
        TestConnect.cluster(); // started before the capture: its start-up is no part of the test
        log = LogCapture.start(); // from before the canary is first used
        postgres = new PostgresBuilder().passwordsExceptSuperuser().start();
        admin = PostgresServer.of(postgres).createDatabase("leaks", "");
        // only the SCRAM verifier goes over SQL: the canary itself reaches the server only through the
        // connector (and the one control connection below), so any copy of it in a log came from them
        admin.execute("CREATE ROLE " + ROLE + " LOGIN PASSWORD '" + scramVerifier(CANARY) + "' IN ROLE outbox_relay");
    }

    @AfterAll
    static void cleanUp() {
        try {
            for (String name : new String[] {RUNNING, REFUSED}) {
                if (TestConnect.cluster().connectors().contains(name)) {
                    TestConnect.cluster().deleteConnector(name);
                }
            }
            if (postgres != null) {
                postgres.close();
            }
        } finally {
            log.close();
        }
    }

    private static Map<String, String> config(String name, String password) {
        return config(name, ROLE, password);
    }

    private static Map<String, String> config(String name, String role, String password) {
        Map<String, String> cfg = TestConnect.relayConfig(admin, "orders", 1);
        cfg.put("name", name);
        cfg.put("connection.user", role);
        cfg.put("connection.password", password);
        cfg.put("connection.ssl.password", SSL_CANARY);
        // every connector here relays the same table, so all serve the same subscriptions (a connector with
        // other ones would be refused: ConnectorsSharingATableIT)
        cfg.put("subscription.orders.topic", "leaks-orders");
        cfg.put("outbox.backoff.initial.ms", "200");
        cfg.put("outbox.backoff.max.ms", "1000");
        return cfg;
    }

    /**
     * The SCRAM-SHA-256 verifier PostgreSQL stores for {@code password} (RFC 5802/7677, as
     * {@code pg_authid.rolpassword} holds it): CREATE ROLE accepts it in place of the password.
     */
    static String scramVerifier(String password) {
        try {
            byte[] salt = new byte[16];
            new SecureRandom().nextBytes(salt);
            int iterations = 4096;
            byte[] salted = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
                .generateSecret(new PBEKeySpec(password.toCharArray(), salt, iterations, 256)).getEncoded();
            byte[] clientKey = hmac(salted, "Client Key");
            byte[] storedKey = MessageDigest.getInstance("SHA-256").digest(clientKey);
            byte[] serverKey = hmac(salted, "Server Key");
            Base64.Encoder b64 = Base64.getEncoder();
            return "SCRAM-SHA-256$" + iterations + ":" + b64.encodeToString(salt) + "$"
                + b64.encodeToString(storedKey) + ":" + b64.encodeToString(serverKey);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String message) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    }

    /** Fails listing the offending lines (the canary masked), never printing the whole text. */
    private static void assertNoCanary(String where, String text) {
        // the whole value, or a fragment long enough to matter (a truncated or split value)
        List<String> needles = List.of(CANARY, WRONG_CANARY, SSL_CANARY, CANARY.substring(7, 31),
            WRONG_CANARY.substring(13, 37), SSL_CANARY.substring(11, 35));
        List<String> leaks = text.lines().filter(line -> needles.stream().anyMatch(line::contains))
            .map(line -> {
                String masked = line;
                for (String n : needles) {
                    masked = masked.replace(n, "<CANARY>");
                }
                return masked.length() > 2000 ? masked.substring(0, 2000) + "…" : masked;
            })
            .toList();
        assertThat(leaks).as("lines of the %s that show the password", where).isEmpty();
    }

    private static ConnectorStateInfo.TaskState task(String connector) {
        ConnectorStateInfo info = TestConnect.cluster().connectorStatus(connector);
        return info.tasks().isEmpty() ? null : info.tasks().get(0);
    }

    @Test
    @Order(1)
    void theServerReallyChecksThePassword() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", ROLE);
        p.setProperty("password", WRONG_CANARY);
        SQLException e = catchThrowableOfType(SQLException.class, () -> DriverManager.getConnection(admin.jdbcUrl(), p));
        assertThat((Throwable) e).isNotNull();
        assertThat(e.getSQLState()).isEqualTo("28P01");

        p.setProperty("password", CANARY);
        try (Connection c = DriverManager.getConnection(admin.jdbcUrl(), p)) {
            assertThat(c.isValid(5)).isTrue();
        }
    }

    @Test
    @Order(2)
    void validationRepliesNeverShowThePassword() throws IOException {
        Reply ok = WorkerRest.validate(config(RUNNING, CANARY));
        assertThat(ok.json().get("error_count").asInt()).as(ok.body()).isZero();
        assertThat(ok.body()).contains("\"name\":\"connection.password\",\"value\":\"[hidden]\"")
            .contains("\"name\":\"connection.ssl.password\",\"value\":\"[hidden]\"");
        assertNoCanary("validate reply", ok.body());

        Reply wrong = WorkerRest.validate(config(RUNNING, WRONG_CANARY));
        assertThat(WorkerRest.errorsOn(wrong, "connection.password")).singleElement().asString()
            .contains("password authentication failed for user \"relay_leak\"").contains("28P01");
        assertNoCanary("validate reply for a wrong password", wrong.body());

        Map<String, String> unreachable = config(RUNNING, CANARY);
        unreachable.put("connection.url", "jdbc:postgresql://localhost:" + ConnectorValidationIT.closedPort() + "/leaks");
        Reply refused = WorkerRest.validate(unreachable);
        assertThat(WorkerRest.errorsOn(refused, "connection.url")).singleElement().asString().contains("refused");
        assertNoCanary("validate reply for an unreachable server", refused.body());
        Reply create = WorkerRest.put("connectors/leak-unreachable/config", unreachable);
        assertThat(create.status()).isEqualTo(400);
        assertNoCanary("rejected create", create.body());
    }

    @Test
    @Order(3)
    void aRunningRelayShowsNoPasswordInItsStatus() {
        Map<String, String> cfg = config(RUNNING, CANARY);
        // the mention-recovery companion task logs in with the same password: cover it too
        cfg.put("mentions.enabled", "true");
        cfg.put("tasks.max", "2");
        assertThat(WorkerRest.put("connectors/" + RUNNING + "/config", cfg).status()).isEqualTo(201);
        admin.insertEvents(3, 3, "order.created");

        // the relay logged in with the canary: it fanned out
        await().atMost(Duration.ofSeconds(30)).until(() -> admin.queryLong(
            "SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == 3);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() ->
            TestConnect.cluster().connectorStatus(RUNNING).tasks().stream().filter(t -> t.state().equals("RUNNING"))
                .count() == 2);
        for (String resource : new String[] {"connectors/" + RUNNING + "/status", "connectors?expand=status",
            "connectors/" + RUNNING + "/tasks/0/status", "connectors/" + RUNNING + "/topics"}) {
            Reply reply = WorkerRest.get(resource);
            assertThat(reply.status()).as(resource).isEqualTo(200);
            assertNoCanary(resource, reply.body());
        }
    }

    @Test
    @Order(4)
    void connectReturnsStoredConfigsAsGiven() {
        // Connect's behaviour, not the connector's: documented in the README (use a ConfigProvider,
        // e.g. ${file:/etc/kafka/secrets/db.properties:password}, so only the reference is stored)
        for (String resource : new String[] {"connectors/" + RUNNING + "/config", "connectors/" + RUNNING,
            "connectors/" + RUNNING + "/tasks", "connectors?expand=info"}) {
            Reply reply = WorkerRest.get(resource);
            assertThat(reply.status()).as(resource).isEqualTo(200);
            assertThat(reply.body()).as(resource).contains(CANARY);
        }
    }

    @Test
    @Order(5)
    void aTaskRefusedForAWrongPasswordFailsWithATraceThatDoesNotShowIt() {
        admin.execute("CREATE ROLE " + ROTATED_ROLE + " LOGIN PASSWORD '" + scramVerifier(CANARY) + "' IN ROLE outbox_relay");
        assertThat(WorkerRest.put("connectors/" + REFUSED + "/config", config(REFUSED, ROTATED_ROLE, CANARY)).status())
            .isEqualTo(201);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> task(REFUSED).state().equals("RUNNING"));

        // the password is rotated under the running relay, and its sessions are cut
        admin.execute("ALTER ROLE " + ROTATED_ROLE + " PASSWORD '" + scramVerifier(WRONG_CANARY) + "'");
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE"
            + " 'outbox-relay:" + REFUSED + "%'");

        await().atMost(Duration.ofSeconds(45)).ignoreExceptions().until(() -> task(REFUSED).state().equals("FAILED"));
        String trace = task(REFUSED).trace();
        assertThat(trace).contains("password authentication failed for user \"" + ROTATED_ROLE + "\"")
            .contains("28P01").contains("connection.password");
        assertNoCanary("failed task trace", trace);
        assertNoCanary("status", WorkerRest.get("connectors/" + REFUSED + "/status").body());
        // the other relay, logged in as another role, is not disturbed
        assertThat(task(RUNNING).state()).isEqualTo("RUNNING");
    }

    @Test
    @Order(6)
    void aRelayThatLosesItsServerLogsTheFailureWithoutThePassword() {
        postgres.close();

        await().atMost(Duration.ofSeconds(45)).until(() -> log.text().contains("Connection to localhost:"
            + postgres.port() + " refused") && log.text().contains("backing off"));
        assertThat(task(RUNNING).state()).isEqualTo("RUNNING");
        assertNoCanary("status of a relay without its server", WorkerRest.get("connectors/" + RUNNING + "/status").body());
    }

    @Test
    @Order(7)
    void nothingLoggedShowsThePassword() {
        String text = log.text();

        // the capture saw what it has to: config dumps, the pool, the driver, the failures
        assertThat(log.truncated()).isFalse();
        assertThat(text)
            .contains("OutboxSourceConnectorConfig values")
            .contains("connection.password = [hidden]")
            .contains("Outbox relay task " + RUNNING + "-0 started")
            .contains("Mention recovery task started")
            .contains("com.zaxxer.hikari")
            .contains("JUL ") // pgjdbc's own java.util.logging output
            .contains("password authentication failed for user \"" + ROTATED_ROLE + "\"")
            .contains("refused");
        assertNoCanary("captured logs", text);
    }
}
