package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Scenario 7: {@code tasks.max} goes 1 → 4 → 2 while the connector drains a backlog. Every change
 * stops the running tasks and starts new ones that own different shares of the subjects. Guards
 * against rows stranded under a lease of a task that no longer exists, against a new task re-sending
 * rows an old one still had in flight (duplicates, and a subject's older event after its newer one),
 * and against two tasks owning one subject at once. New events keep arriving throughout, so every change
 * lands while rows are in flight.
 *
 * <p>The default suite drains 8,000 events (plus the stream); {@code -Pfaults} 20,000. Row updates are
 * throttled to ~1 ms each, so each task drains a few hundred rows a second and both changes land while
 * thousands of rows wait, on any machine.
 */
class TaskCountChangeIT {
    private static final String CONNECTOR = "faults-task-count";
    private static final int BATCH = 50;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void changingTasksMaxDuringADrainLosesNothingAndKeepsPerSubjectOrder() {
        int events = FaultScenarios.events(8_000, 20_000);
        TestDatabase db = TestPostgres.get().createDatabase("faults_task_count");
        FaultScenarios.insertEvents(db, events, 500);
        db.throttleRowUpdates("events", 1_000);
        List<Subscription> subscriptions = FaultScenarios.subscriptions(CONNECTOR);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, 1);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.batch.max.size", Integer.toString(BATCH)); // the duplicate bound: max size x in flight
        cfg.put("outbox.max.inflight.batches", "2");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);

        try (LoadGenerator load = new LoadGenerator(db, 300, 500).start()) {
            for (int[] step : new int[][] {{4, events / 10}, {2, events / 5}}) {
                int tasks = step[0];
                FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> OutboxLedger.stamped(db) >= step[1],
                    () -> "drain stalled: " + OutboxLedger.state(db));
                // measured when the change is made: the old tasks keep draining until the rebalance stops them
                long backlog = OutboxLedger.backlog(db);
                cfg.put("tasks.max", Integer.toString(tasks));
                TestConnect.cluster().configureConnector(CONNECTOR, cfg);
                log("tasks.max -> %d with %d rows waiting when it was changed; now: %s", tasks, backlog,
                    OutboxLedger.state(db));
                assertThat(backlog).as("the change must be made mid-drain").isPositive();
                FaultScenarios.awaitOrDescribe(Duration.ofSeconds(60), () -> running(tasks),
                    () -> "tasks not running: " + TestConnect.cluster().connectorStatus(CONNECTOR));
                log("%d tasks running", tasks);
            }
            db.unthrottleRowUpdates("events");
            ChildJvm.sleep(3_000); // the last shape runs under load for a while
            log("%d events committed during the changes", load.inserted());
        }
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(180));

        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 7 (tasks.max 1 -> 4 -> 2)",
            OutboxLedger.check(db, TestConnect.cluster().kafka().bootstrapServers(), subscriptions));
        log("rows claimed more than once: %d", db.queryLong("SELECT count(*) FROM events WHERE attempts > 1"));
        reports.assertNothingLost().assertPerSubjectOrder().assertNoDuplicates();
    }

    private static boolean running(int tasks) {
        ConnectorStateInfo status = TestConnect.cluster().connectorStatus(CONNECTOR);
        return status.tasks().size() == tasks && status.tasks().stream().allMatch(t -> "RUNNING".equals(t.state()));
    }
}
