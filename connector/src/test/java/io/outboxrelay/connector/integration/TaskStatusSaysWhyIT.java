package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.testsupport.PostgresServer;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When the relay cannot work, an operator reads why in the task's REST status trace, in one line
 * that says what to do: a table that is gone, or a database a starting task cannot reach.
 */
class TaskStatusSaysWhyIT {
    private String connector;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(connector);
    }

    private static ConnectorStateInfo.TaskState task(String connector) {
        return TestConnect.cluster().connectorStatus(connector).tasks().get(0);
    }

    private static String firstLine(String trace) {
        return trace.lines().findFirst().orElse("");
    }

    @Test
    void aDroppedTableFailsTheTaskWithAHintNamingTheSchemaFile() {
        TestDatabase db = TestPostgres.get().createDatabase("status_table");
        connector = "status-table";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("outbox.sweep.interval.ms", "200");
        TestConnect.cluster().configureConnector(connector, cfg);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> !TestConnect.cluster().connectorStatus(connector)
            .tasks().isEmpty() && task(connector).state().equals("RUNNING"));

        db.execute("DROP TABLE events CASCADE"); // with the operator views that read it
        await().atMost(Duration.ofSeconds(30)).until(() -> task(connector).state().equals("FAILED"));
        String line = firstLine(task(connector).trace());
        assertThat(line).contains("relation \"events\" does not exist").contains("42P01")
            .contains("create it with schemas/sql/outbox.sql");
    }

    @Test
    void aStartingTaskThatCannotReachTheDatabaseFailsWithTheReasonAfterItsRetryWindow() {
        LocalPostgres server = new PostgresBuilder().start();
        TestDatabase db = PostgresServer.of(server).createDatabase("status_unreachable", "");
        connector = "status-unreachable";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("connection.startup.retry.ms", "3000");
        cfg.put("outbox.backoff.initial.ms", "200");
        cfg.put("outbox.backoff.max.ms", "500");
        TestConnect.cluster().configureConnector(connector, cfg);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> !TestConnect.cluster().connectorStatus(connector)
            .tasks().isEmpty() && task(connector).state().equals("RUNNING"));

        server.close(); // the database goes away, then the task restarts and cannot reach it
        TestConnect.cluster().restartTask(connector, 0);
        // the task waits out the pool's 10 s connection timeout at start and in its first pass (~20 s here)
        await().atMost(Duration.ofSeconds(60)).until(() -> task(connector).state().equals("FAILED"));
        String line = firstLine(task(connector).trace());
        assertThat(line).contains("Cannot reach PostgreSQL at jdbc:postgresql://localhost:" + server.port())
            .contains("Check connection.url");
    }
}
