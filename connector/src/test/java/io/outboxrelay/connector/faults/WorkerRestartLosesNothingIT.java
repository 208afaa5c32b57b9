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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Scenarios 1 and 2: the Connect worker (a separate OS process, the connector installed from the built
 * plugin archive through {@code plugin.path}) dies or is restarted in the middle of draining a backlog.
 * Guards against the relay stamping rows whose records were never acknowledged (a SIGKILL would turn
 * them into silent loss) and against a clean restart delivering anything twice.
 *
 * <p>The default suite drains 5,000 (SIGKILL) and 10,000 (clean stop) events; {@code -Pfaults} drains the 20,000.
 */
class WorkerRestartLosesNothingIT {
    private static final int BATCH = 100;
    private static final int INFLIGHT_BATCHES = 4;

    private FaultWorker worker;

    @AfterEach
    void stopWorker() {
        if (worker != null) {
            worker.close();
        }
    }

    @Test
    void aSigkilledWorkerRestartedMidDrainDeliversEveryEvent() {
        int events = FaultScenarios.events(5_000, 20_000);
        Drain drain = startDrain("sigkill", events);

        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> OutboxLedger.stamped(drain.db) >= events / 4,
            () -> "drain did not start: " + OutboxLedger.state(drain.db) + "\n" + worker.statusJson(drain.connector));
        worker.kill();
        long stampedAtKill = OutboxLedger.stamped(drain.db);
        log("SIGKILLed the worker with %d of %d rows stamped: %s", stampedAtKill, events, OutboxLedger.state(drain.db));
        assertThat(stampedAtKill).as("the kill must land mid-drain").isLessThan(events);
        drain.db.unthrottleRowUpdates("events");
        // nothing the dead worker stamped is missing from its topic
        FaultScenarios.logged("after SIGKILL", OutboxLedger.check(drain.db, drain.bootstrap, drain.subscriptions))
            .assertStampsBacked();

        worker.start();
        FaultScenarios.awaitDrained(drain.db, Duration.ofSeconds(180));
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 1 (SIGKILL mid-drain)",
            OutboxLedger.check(drain.db, drain.bootstrap, drain.subscriptions));
        reports.assertNothingLost()
            .assertDuplicatesAtMost((long) drain.subscriptions.size() * BATCH * INFLIGHT_BATCHES,
                "one task's in-flight window per topic: batch x max in-flight batches");
        assertThat(OutboxLedger.poisoned(drain.db)).isZero();
        assertThat(worker.tasksRunning(drain.connector, 1)).as(worker.statusJson(drain.connector)).isTrue();
    }

    @Test
    void aCleanlyRestartedWorkerDeliversEveryEventOnceInOrder() {
        int events = FaultScenarios.events(5_000, 20_000);
        Drain drain = startDrain("clean_restart", events);

        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> OutboxLedger.stamped(drain.db) >= events / 4,
            () -> "drain did not start: " + OutboxLedger.state(drain.db) + "\n" + worker.statusJson(drain.connector));
        worker.stop();
        long stampedAtStop = OutboxLedger.stamped(drain.db);
        log("stopped the worker (SIGTERM) with %d of %d rows stamped: %s", stampedAtStop, events,
            OutboxLedger.state(drain.db));
        assertThat(stampedAtStop).as("the stop must land mid-drain").isLessThan(events);
        drain.db.unthrottleRowUpdates("events");
        assertThat(drain.db.queryLong("SELECT count(*) FROM events WHERE lease_owner IS NOT NULL"))
            .as("a clean stop gives every lease back").isZero();

        worker.start();
        FaultScenarios.awaitDrained(drain.db, Duration.ofSeconds(180));
        FaultScenarios.logged("scenario 2 (clean restart mid-drain)",
                OutboxLedger.check(drain.db, drain.bootstrap, drain.subscriptions))
            .assertNothingLost().assertNoDuplicates().assertPerSubjectOrder();
        assertThat(drain.db.queryLong("SELECT max(attempts) FROM events")).isEqualTo(1);
    }

    private record Drain(TestDatabase db, String connector, String bootstrap, List<Subscription> subscriptions) {
    }

    /** A backlog of events, a worker process on the shared broker, and the connector started on it. */
    private Drain startDrain(String name, int events) {
        TestDatabase db = TestPostgres.get().createDatabase("faults_" + name);
        FaultScenarios.insertEvents(db, events, 200);
        // ~500 rows/s for the one task: the kill or stop lands mid-drain however fast the machine is (a SIGTERM
        // takes a moment to stop the task, and the relay keeps draining meanwhile)
        db.throttleRowUpdates("events", 1_000);
        String bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        worker = new FaultWorker(name, bootstrap).start();
        List<Subscription> subscriptions = FaultScenarios.subscriptions("faults-" + name);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, 1);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.batch.max.size", Integer.toString(BATCH)); // the duplicate bound: max size x in flight
        cfg.put("outbox.max.inflight.batches", Integer.toString(INFLIGHT_BATCHES));
        String connector = "faults-" + name;
        worker.configureConnector(connector, cfg);
        log("%s: %d events, connector %s on worker pid %d (log %s)", name, events, connector, worker.pid(), worker.log());
        return new Drain(db, connector, bootstrap, subscriptions);
    }
}
