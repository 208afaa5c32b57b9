package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.PostgresServer;
import io.outboxrelay.testsupport.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The relay talks to a TLS-only-verified server the way the README tells users to configure it
 * ({@code sslmode=verify-full&sslrootcert=...}, no custom socket factory): its sessions are encrypted,
 * and a server whose certificate the configured root does not vouch for gets no connection, so no event
 * is claimed or stamped through it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TlsConnectionIT {
    private static final String CONNECTOR = "tls-relay";
    private static final String TOPIC = "tls-relay-orders";
    private static Path dir;
    private static SelfSignedCertificate server;
    private static SelfSignedCertificate impostor;
    /** What the connector trusts: a copy of the server's certificate, swapped for the impostor's in one test. */
    private static Path trusted;
    private static LocalPostgres postgres;
    private static TestDatabase db;

    @BeforeAll
    static void startTlsServer() throws IOException {
        dir = PostgresBuilder.tempDir("outbox-relay-tls");
        server = SelfSignedCertificate.forLocalhost(dir, "server");
        impostor = SelfSignedCertificate.forLocalhost(dir, "impostor");
        trusted = dir.resolve("trusted-root.crt");
        Files.copy(server.certificatePem(), trusted);
        postgres = new PostgresBuilder().tls(server.certificatePem(), server.privateKeyPem()).start();
        // the test's own sessions trust the server's certificate itself; only the relay's root is swapped
        db = PostgresServer.of(postgres).createDatabase("tls_relay", "sslmode=verify-full&sslrootcert=" + server.certificatePem());
    }

    @AfterAll
    static void stop() {
        if (TestConnect.cluster().connectors().contains(CONNECTOR)) {
            TestConnect.cluster().deleteConnector(CONNECTOR);
        }
        postgres.close();
    }

    private static String relayUrl(Path root) {
        return db.jdbcUrl().replace(server.certificatePem().toString(), root.toString());
    }

    private static Map<String, String> config(String name, String url) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("name", name);
        cfg.put("connection.url", url);
        cfg.put("subscription.orders.topic", TOPIC);
        cfg.put("outbox.backoff.initial.ms", "200");
        cfg.put("outbox.backoff.max.ms", "1000");
        return cfg;
    }

    private static long stamped() {
        return db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL");
    }

    /** (application_name, ssl) of every session the relay has open. */
    private static List<List<Object>> relaySessions() {
        return db.query("SELECT a.application_name::text, s.ssl FROM pg_stat_activity a"
            + " JOIN pg_stat_ssl s ON s.pid = a.pid WHERE a.application_name LIKE ?", "outbox-relay:" + CONNECTOR + "%");
    }

    @Test
    @Order(1)
    void aRelayVerifyingTheServerCertificateFansOutOverTls() {
        Map<String, String> cfg = config(CONNECTOR, relayUrl(trusted));
        Reply validation = WorkerRest.validate(cfg);
        assertThat(validation.json().get("error_count").asInt()).as(validation.body()).isZero();
        assertThat(WorkerRest.put("connectors/" + CONNECTOR + "/config", cfg).status()).isEqualTo(201);

        db.insertEvents(3, 3, "order.created");

        await().atMost(Duration.ofSeconds(30)).until(() -> stamped() == 3);
        assertThat(TestConnect.consume(3, Duration.ofSeconds(20), TOPIC)).hasSize(3);
        List<List<Object>> sessions = relaySessions();
        assertThat(sessions).as("relay sessions").isNotEmpty()
            .allSatisfy(row -> assertThat(row.get(1)).as("ssl of %s", row.get(0)).isEqualTo(true));
        // control: the test's own plain session is seen as not encrypted, so the column does tell
        assertThat(new TestDatabase(db.name(), db.jdbcUrl().replaceFirst("\\?.*", "?sslmode=disable"), "postgres",
            null).queryLong("SELECT count(*) FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND NOT ssl"))
            .isEqualTo(1);
    }

    @Test
    @Order(2)
    void validationReportsAnUntrustedCertificateOnTheUrl() {
        Map<String, String> cfg = config("tls-impostor", relayUrl(impostor.certificatePem()));

        Reply validation = WorkerRest.validate(cfg);

        assertThat(WorkerRest.errorsOn(validation, "connection.url")).singleElement().asString()
            .contains("cannot connect to").contains("SSL error").contains("PKIX path building failed");
        assertThat(validation.json().get("error_count").asInt()).isEqualTo(1);
        Reply create = WorkerRest.put("connectors/tls-impostor/config", cfg);
        assertThat(create.status()).isEqualTo(400);
        assertThat(create.body()).contains("PKIX");
    }

    @Test
    @Order(3)
    void aRelayWhoseRootDoesNotVouchForTheServerStampsNothingUntilItDoes() throws Exception {
        long before = stamped();
        TestConnect.cluster().stopConnector(CONNECTOR);
        await().atMost(Duration.ofSeconds(20)).until(() -> relaySessions().isEmpty());
        copy(impostor.certificatePem(), trusted);
        db.insertEvents(2, 2, "order.paid");

        try (LogCapture log = LogCapture.start()) {
            TestConnect.cluster().resumeConnector(CONNECTOR);
            // the restarted task tried, and the handshake refused the server
            await().atMost(Duration.ofSeconds(30))
                .until(() -> log.text().contains("PKIX path building failed"));
        }
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
            .until(() -> stamped() == before && relaySessions().isEmpty());
        assertThat(TestConnect.cluster().connectorStatus(CONNECTOR).tasks())
            .as("an untrusted server is a connection failure: retried, not fatal")
            .allSatisfy(t -> assertThat(t.state()).isEqualTo("RUNNING"));

        // control: trusting the server again is all it takes
        copy(server.certificatePem(), trusted);
        await().atMost(Duration.ofSeconds(30)).until(() -> stamped() == before + 2);
        assertThat(relaySessions()).isNotEmpty().allSatisfy(row -> assertThat(row.get(1)).isEqualTo(true));
    }

    private static void copy(Path from, Path to) {
        try {
            Path tmp = Files.createTempFile(dir, "root", ".crt");
            Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
