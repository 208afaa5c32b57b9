package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.ContainerPostgres;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * -Ptestcontainers only: the relay on a Kafka broker in a container ({@code apache/kafka}, the version
 * the project builds against unless {@code -Doutboxrelay.test.kafka.image=...}), PostgreSQL in a
 * container (through {@link TestPostgres}), and a Connect worker process that installs the built plugin
 * archive from {@code plugin.path}. Every committed event must reach every subscription's topic once,
 * in per-subject order, checked by the same {@link DeliveryChecker} as the fault suite.
 */
class TestcontainersKafkaIT {
    private static KafkaContainer kafka;
    private static FaultWorker worker;

    @BeforeAll
    static void start() {
        ContainerPostgres.TestcontainersPreflight.requireDocker();
        String image = System.getProperty("outboxrelay.test.kafka.image", "apache/kafka:" + kafkaVersion());
        kafka = new KafkaContainer(DockerImageName.parse(image));
        kafka.start();
        worker = new FaultWorker("testcontainers", kafka.getBootstrapServers()).start();
    }

    @AfterAll
    static void stop() {
        if (worker != null) {
            worker.close();
        }
        if (kafka != null) {
            kafka.stop();
        }
    }

    @Test
    void everyEventCrossesAContainerizedBrokerOnceAndInOrder() {
        int events = 5_000;
        TestDatabase db = TestPostgres.get().createDatabase("testcontainers");
        FaultScenarios.insertEvents(db, events, 200);
        List<Subscription> subscriptions = FaultScenarios.subscriptions("tc");
        Map<String, String> cfg = FaultScenarios.relayConfig(db, subscriptions, 2);
        worker.configureConnector("testcontainers", cfg);
        log("relaying %d events through %s", events, kafka.getBootstrapServers());

        FaultScenarios.awaitDrained(db, Duration.ofSeconds(180));
        FaultScenarios.logged("testcontainers", OutboxLedger.check(db, kafka.getBootstrapServers(), subscriptions))
            .assertNothingLost().assertNoDuplicates().assertPerSubjectOrder();
        assertThat(worker.tasksRunning("testcontainers", 2)).as(worker.statusJson("testcontainers")).isTrue();
    }

    private static String kafkaVersion() {
        return org.apache.kafka.common.utils.AppInfoParser.getVersion();
    }
}
