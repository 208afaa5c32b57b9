package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.SocketFactory;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Config values are input from whoever reaches the Connect REST API. A table name is only ever an
 * identifier (a name built to break out of quoting drops nothing, and is reported as a table that does
 * not exist), and a driver property that would load a class on the worker is refused before anything
 * connects.
 */
class HostileInputsIT {
    private static final String HOSTILE = "events\"; DROP TABLE x; --";
    private static final String RUNS_ON_HOSTILE = "hostile-table";
    private static TestDatabase db;

    @BeforeAll
    static void createDatabase() {
        db = TestPostgres.get().createDatabase("hostile");
        db.execute("CREATE TABLE x (id int); INSERT INTO x VALUES (42)");
    }

    @BeforeEach
    void resetTripwire() {
        Tripwire.INSTANCES.set(0);
    }

    @AfterAll
    static void deleteConnectors() {
        if (TestConnect.cluster().connectors().contains(RUNS_ON_HOSTILE)) {
            TestConnect.cluster().deleteConnector(RUNS_ON_HOSTILE);
        }
    }

    private static boolean xIsIntact() {
        return db.queryLong("SELECT id FROM x") == 42;
    }

    private static Map<String, String> config(String name, String topic) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("name", name);
        cfg.put("subscription.orders.topic", topic);
        return cfg;
    }

    @Test
    void aTableNameBuiltToBreakOutOfQuotingIsOneNameThatDoesNotExist() {
        Map<String, String> cfg = config("hostile-missing", "hostile-missing-orders");
        cfg.put("outbox.table", HOSTILE);

        Reply validation = WorkerRest.validate(cfg);
        assertThat(WorkerRest.errorsOn(validation, "outbox.table")).singleElement().asString()
            .contains("table \"events\"\"; DROP TABLE x; --\" does not exist")
            .contains("schemas/sql/outbox.sql");

        Reply create = WorkerRest.put("connectors/hostile-missing/config", cfg);
        assertThat(create.status()).isEqualTo(400);
        assertThat(create.body()).contains("does not exist");
        assertThat(WorkerRest.get("connectors/hostile-missing").status()).isEqualTo(404);
        assertThat(xIsIntact()).isTrue();
    }

    @Test
    void aRelayOnAHostileNamedTableFansOutAndFailsClearlyWhenItIsGone() {
        // the name is a legal (quoted) identifier: a table can really be called that
        db.execute("CREATE TABLE \"events\"\"; DROP TABLE x; --\" (LIKE events INCLUDING ALL)");
        db.execute("CREATE TRIGGER hostile_notify AFTER INSERT ON \"events\"\"; DROP TABLE x; --\""
            + " FOR EACH STATEMENT EXECUTE FUNCTION events_notify('outbox_events')");
        Map<String, String> cfg = config(RUNS_ON_HOSTILE, "hostile-table-orders");
        cfg.put("outbox.table", HOSTILE);
        assertThat(WorkerRest.put("connectors/" + RUNS_ON_HOSTILE + "/config", cfg).status()).isEqualTo(201);

        db.execute("INSERT INTO \"events\"\"; DROP TABLE x; --\" (type, subject) VALUES"
            + " ('order.created', 'order-1'), ('order.paid', 'order-1')");
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong(
            "SELECT count(*) FROM \"events\"\"; DROP TABLE x; --\" WHERE fanned_out_at IS NOT NULL") == 2);
        assertThat(TestConnect.consume(2, Duration.ofSeconds(20), "hostile-table-orders")).hasSize(2);
        assertThat(xIsIntact()).isTrue();

        db.execute("DROP TABLE \"events\"\"; DROP TABLE x; --\"");
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> taskState().equals("FAILED"));

        String trace = TestConnect.cluster().connectorStatus(RUNS_ON_HOSTILE).tasks().get(0).trace();
        // PostgreSQL prints the name unescaped inside its quotes
        assertThat(trace).contains("relation \"events\"; DROP TABLE x; --\" does not exist")
            .contains("42P01").contains("schemas/sql/outbox.sql");
        assertThat(xIsIntact()).isTrue();
    }

    private static String taskState() {
        ConnectorStateInfo info = TestConnect.cluster().connectorStatus(RUNS_ON_HOSTILE);
        return info.tasks().isEmpty() ? "NONE" : info.tasks().get(0).state();
    }

    @Test
    void aClassLoadingDriverPropertyIsRefusedAtCreationAndNothingRuns() {
        String url = db.jdbcUrl() + "?socketFactory=" + Tripwire.class.getName();
        Map<String, String> cfg = config("hostile-factory", "hostile-factory-orders");
        cfg.put("connection.url", url);

        Reply create = WorkerRest.put("connectors/hostile-factory/config", cfg);

        assertThat(create.status()).isEqualTo(400);
        assertThat(create.json().get("message").asText())
            .contains("connection.url").contains("'socketFactory' is not allowed")
            .doesNotContain(Tripwire.class.getSimpleName());
        assertThat(WorkerRest.get("connectors/hostile-factory").status()).isEqualTo(404);
        assertThat(db.queryLong("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE"
            + " 'outbox-relay%hostile-factory%'")).isZero();
        assertThat(Tripwire.INSTANCES.get()).as("the worker instantiated the configured socket factory").isZero();

        // control: the driver does load the class when nothing stops it, so a zero above means something
        Properties p = new Properties();
        p.setProperty("user", db.user());
        try (Connection c = DriverManager.getConnection(url, p)) {
            assertThat(c.isValid(5)).isTrue();
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        assertThat(Tripwire.INSTANCES.get()).isPositive();
    }

    /** A socket factory that counts its instances: stands for a class an attacker names in the URL. */
    public static final class Tripwire extends SocketFactory {
        static final AtomicInteger INSTANCES = new AtomicInteger();

        public Tripwire() {
            INSTANCES.incrementAndGet();
        }

        @Override
        public Socket createSocket() {
            return new Socket();
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return new Socket(host, port);
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            return new Socket(host, port, localHost, localPort);
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            return new Socket(host, port);
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
            return new Socket(address, port, localAddress, localPort);
        }
    }
}
