package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.testsupport.TestDatabase;
import java.io.IOException;
import java.lang.management.MemoryUsage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Scenario 10: a soak. Events are committed at 500 a second for 10 minutes
 * ({@code -Doutboxrelay.faults.soak.minutes}) while random faults from scenarios 1-6 hit the worker
 * (SIGKILL, clean restart), PostgreSQL (sessions terminated, {@code pg_ctl stop -m immediate}), the
 * broker (stopped for a while) and LISTEN. After each fault the backlog (rows older than a few seconds
 * and not stamped) must come back to 0 by itself; at the end nothing is lost, nothing is stamped
 * that its topic does not hold, and the worker's heap after a full GC has not grown. Guards against
 * faults that only bite in combination or over time: leaked leases, leaked in-memory rows, a task
 * that recovers from one fault but not the next.
 *
 * <p>Under {@code -Pfaults} only. The seed of the fault sequence is logged;
 * {@code -Doutboxrelay.faults.seed=<n>} replays it.
 */
@EnabledIfSystemProperty(named = FaultScenarios.FULL_PROPERTY, matches = "true")
class RandomFaultSoakIT {
    private static final int RATE = 500;
    private static final int TASKS = 2;
    private static final int BATCH = 200;
    private static final int INFLIGHT_BATCHES = 4;
    private static final String CONNECTOR = "faults-soak";
    private static final Duration LAG_ALLOWED = Duration.ofSeconds(5);

    private LocalPostgres postgres;
    private KafkaBrokerProcess broker;
    private FaultWorker worker;

    @AfterEach
    void stopEverything() {
        for (AutoCloseable c : new AutoCloseable[] {worker, broker, postgres}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    log("closing %s failed: %s", c, e);
                }
            }
        }
    }

    enum Fault { SIGKILL_WORKER, RESTART_WORKER, TERMINATE_SESSIONS, STOP_POSTGRES, STOP_BROKER, KILL_LISTEN }

    @Test
    void randomFaultsUnderSteadyLoadLoseNothingAndTheBacklogRecoversAfterEach() throws Exception {
        Duration soak = Duration.ofMinutes(Long.getLong("outboxrelay.faults.soak.minutes", 10));
        long seed = Long.getLong("outboxrelay.faults.seed", System.currentTimeMillis());
        Random random = new Random(seed);
        log("soak: %s at %d events/s, fault seed %d", soak, RATE, seed);

        postgres = FaultScenarios.postgres("soak");
        TestDatabase db = FaultScenarios.createDatabase(postgres, "faults_soak");
        broker = new KafkaBrokerProcess("soak").start();
        int jmxPort = ChildJvm.freePort();
        // lost tasks come back 10 s after a worker crash; a longer broker outage makes the worker drop its tasks
        worker = new FaultWorker("soak", broker.bootstrapServers(),
            Map.of("scheduled.rebalance.max.delay.ms", "10000"), ChildJvm.jmxArgs(jmxPort)).start();
        List<Subscription> subscriptions = FaultScenarios.subscriptions(CONNECTOR);
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, TASKS);
        cfg.put("outbox.batch.size", Integer.toString(BATCH));
        cfg.put("outbox.batch.max.size", Integer.toString(BATCH)); // the duplicate bound: max size x in flight
        cfg.put("outbox.max.inflight.batches", Integer.toString(INFLIGHT_BATCHES));
        cfg.put("outbox.sweep.interval.ms", "5000");
        worker.configureConnector(CONNECTOR, cfg);

        Map<Fault, Integer> counts = new LinkedHashMap<>();
        List<String> heap = new ArrayList<>();
        List<Long> heapThisWorker = new ArrayList<>();
        List<Long> recoveries = new ArrayList<>();
        try (LoadGenerator load = new LoadGenerator(db, RATE, 1_000).start()) {
            awaitCaughtUp(db, Duration.ofSeconds(120), "warm-up");
            long end = System.nanoTime() + soak.toNanos();
            while (System.nanoTime() < end) {
                Thread.sleep(5_000 + random.nextInt(15_000)); // steady load between faults
                Fault fault = Fault.values()[random.nextInt(Fault.values().length)];
                counts.merge(fault, 1, Integer::sum);
                log("fault #%d: %s (backlog %d, %d events committed so far)", counts.values().stream()
                    .mapToInt(Integer::intValue).sum(), fault, OutboxLedger.backlog(db), load.inserted());
                inject(fault, db, random);
                if (fault == Fault.SIGKILL_WORKER || fault == Fault.RESTART_WORKER) {
                    heapThisWorker.clear();
                }
                long start = System.nanoTime();
                awaitCaughtUp(db, Duration.ofSeconds(180), "after " + fault);
                long tookMs = (System.nanoTime() - start) / 1_000_000;
                recoveries.add(tookMs);
                long used = heapAfterGc(jmxPort);
                heapThisWorker.add(used);
                heap.add(fault + ":" + used / (1024 * 1024) + "MB");
                log("recovered from %s in %d ms; worker heap after GC %d MB", fault, tookMs, used / (1024 * 1024));
                assertThat(worker.anyTaskFailed(CONNECTOR)).as(worker.statusJson(CONNECTOR)).isFalse();
            }
            log("soak done: faults %s, %d events committed, writer saw %d failed inserts; heap after each fault %s;"
                + " recovery ms %s", counts, load.inserted(), load.failures(), heap, recoveries);
        }
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(180));
        int crashes = counts.values().stream().mapToInt(Integer::intValue).sum();
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 10 (soak, " + counts + ")",
            OutboxLedger.check(db, broker.bootstrapServers(), subscriptions));
        reports.assertNothingLost().assertDuplicatesAtMost((long) crashes * TASKS * BATCH * INFLIGHT_BATCHES
            * subscriptions.size(), "every fault may re-send every task's in-flight window");
        assertThat(OutboxLedger.poisoned(db)).isZero();
        if (heapThisWorker.size() >= 3) {
            long first = heapThisWorker.get(0);
            long last = heapThisWorker.get(heapThisWorker.size() - 1);
            assertThat(last).as("heap after GC of the last worker, first vs last sample: %s", heapThisWorker)
                .isLessThanOrEqualTo(first * 3 / 2 + 32L * 1024 * 1024);
        }
    }

    private void inject(Fault fault, TestDatabase db, Random random) throws Exception {
        switch (fault) {
            case SIGKILL_WORKER -> {
                worker.kill();
                Thread.sleep(1_000 + random.nextInt(4_000));
                worker.start();
            }
            case RESTART_WORKER -> {
                worker.stop();
                worker.start();
            }
            case TERMINATE_SESSIONS -> {
                for (int i = 0; i < 5; i++) {
                    db.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        + "WHERE application_name LIKE ? AND datname = current_database()", "outbox-relay:" + CONNECTOR + "%");
                    Thread.sleep(200 + random.nextInt(800));
                }
            }
            case STOP_POSTGRES -> {
                postgres.stopImmediately();
                Thread.sleep(2_000 + random.nextInt(8_000));
                postgres.start();
            }
            case STOP_BROKER -> {
                broker.stop();
                Thread.sleep(5_000 + random.nextInt(25_000));
                broker.start();
            }
            // a busy task's LISTEN session shows its UNLISTEN (docs/wakeup.md): both are the session to kill
            case KILL_LISTEN -> db.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                + "WHERE application_name LIKE ? AND query ~* '^(UN)?LISTEN'", "outbox-relay:" + CONNECTOR + "%");
        }
    }

    /** No row older than {@link #LAG_ALLOWED} is still waiting: the relay keeps up with the load again. */
    private void awaitCaughtUp(TestDatabase db, Duration timeout, String when) {
        FaultScenarios.awaitOrDescribe(timeout, () -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL"
                + " AND poisoned_at IS NULL AND occurred_at < now() - ? * interval '1 millisecond'", LAG_ALLOWED.toMillis()) == 0,
            () -> "backlog did not recover " + when + ": " + OutboxLedger.state(db) + "\n" + worker.statusJson(CONNECTOR));
    }

    /** The worker's used heap right after a full GC, through its JMX port. */
    private static long heapAfterGc(int jmxPort) throws IOException {
        try (JMXConnector jmx = ChildJvm.jmx(jmxPort)) {
            MBeanServerConnection server = jmx.getMBeanServerConnection();
            ObjectName memory = new ObjectName("java.lang:type=Memory");
            server.invoke(memory, "gc", null, null);
            CompositeData usage = (CompositeData) server.getAttribute(memory, "HeapMemoryUsage");
            return MemoryUsage.from(usage).getUsed();
        } catch (javax.management.JMException e) {
            throw new IOException(e);
        }
    }
}
