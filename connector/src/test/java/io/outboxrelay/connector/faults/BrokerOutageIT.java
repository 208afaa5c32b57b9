package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Scenario 5: the Kafka broker (its own process, as is the Connect worker) is stopped for 30 s while
 * events keep being committed, then started again. Nothing may be stamped during the outage that the
 * topic does not hold (a stamp without an acknowledgement is silent loss), and everything committed
 * before, during and after the outage is delivered once the broker is back, without restarting the
 * connector. Guards against treating a failed or timed-out send as delivered, and against a task that
 * stays dead after the outage.
 *
 * <p>Under {@code -Pfaults} only: a broker process, a worker process and a 30 s outage take over a
 * minute.
 */
@EnabledIfSystemProperty(named = FaultScenarios.FULL_PROPERTY, matches = "true")
class BrokerOutageIT {
    private static final int RATE = 200;
    private KafkaBrokerProcess broker;
    private FaultWorker worker;

    @AfterEach
    void stopProcesses() {
        if (worker != null) {
            worker.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    /**
     * A standalone worker (no group to lose) keeps its task running through the outage: its sends hang
     * and fail over to retries, it must neither stamp nor lose what it has in flight.
     */
    @Test
    void aTaskRunningThroughABrokerOutageStampsNothingUnacknowledgedAndDeliversEverythingAfter() throws Exception {
        outage("keeps", true);
    }

    /**
     * A distributed worker loses its group coordinator with the broker and stops its tasks at once: the
     * task is stopped mid-send, its stop cannot flush, and what it had in flight must be claimed again.
     */
    @Test
    void aTaskStoppedByItsWorkerDuringABrokerOutageLosesNothing() throws Exception {
        outage("revokes", false);
    }

    private void outage(String name, boolean standalone) throws Exception {
        Duration outage = Duration.ofSeconds(30);
        TestDatabase db = TestPostgres.get().createDatabase("faults_broker_outage_" + name);
        broker = new KafkaBrokerProcess("outage-" + name).start();
        worker = (standalone ? FaultWorker.standalone("broker-outage-" + name, broker.bootstrapServers())
            : new FaultWorker("broker-outage-" + name, broker.bootstrapServers())).start();
        String connector = "faults-broker-outage-" + name;
        List<Subscription> subscriptions = FaultScenarios.subscriptions(connector);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, 1);
        worker.configureConnector(connector, cfg);

        try (LoadGenerator load = new LoadGenerator(db, RATE, 100).start()) {
            FaultScenarios.awaitOrDescribe(Duration.ofSeconds(60), () -> OutboxLedger.stamped(db) >= RATE * 5L,
                () -> "steady state not reached: " + OutboxLedger.state(db) + "\n" + worker.statusJson(connector));
            Object stoppedAt = db.query("SELECT now()").get(0).get(0);
            broker.stop();
            log("broker stopped under load (%d events/s) with %d rows stamped", RATE, OutboxLedger.stamped(db));
            List<Long> stampedDuring = new ArrayList<>();
            long outageEnd = System.nanoTime() + outage.toNanos();
            while (System.nanoTime() < outageEnd) {
                Thread.sleep(1_000);
                stampedDuring.add(OutboxLedger.stamped(db));
            }
            Object restartedAt = db.query("SELECT now()").get(0).get(0);
            broker.start();
            long stampedInOutage = db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at > ? AND fanned_out_at < ?",
                stoppedAt, restartedAt);
            log("broker back after %s; stamped count each second of the outage: %s; %d rows stamped while it was down;"
                + " backlog %d", outage, stampedDuring, stampedInOutage, OutboxLedger.backlog(db));

            FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> OutboxLedger.backlog(db) < RATE,
                () -> "did not catch up after the outage: " + OutboxLedger.state(db) + "\n" + worker.statusJson(connector));
            Thread.sleep(5_000); // a few more seconds of steady load after the recovery
            log("%d events committed under load", load.inserted());
        }
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(120));
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 5 (broker stopped " + outage + ", worker "
                + name + " its task)",
            OutboxLedger.check(db, broker.bootstrapServers(), subscriptions));
        reports.assertNothingLost().assertDuplicatesAtMost(2L * 200 * 4, "one task's in-flight window per topic");
        assertThat(OutboxLedger.poisoned(db)).isZero();
        assertThat(worker.tasksRunning(connector, 1)).as(worker.statusJson(connector)).isTrue();
    }
}
