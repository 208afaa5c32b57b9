package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The release archive on a real Connect worker process of each Kafka line the README lists: unzipped into
 * an empty {@code plugin.path}, found by service-loader discovery, relaying a backlog and live events to
 * the test broker (Kafka 4.3.1; a 3.9 worker's clients speak to it), and publishing its task metrics over
 * JMX where that line puts them. Workers from Kafka 4.1 on offer plugin metrics, so the relay's gauges
 * appear as {@code kafka.connect:type=plugins,connector=<c>,task=<t>,kind=relay}; older ones do not, and
 * the connector registers its own {@code io.outboxrelay:type=relay,connector=<c>,task=<t>}. Exactly one of
 * the two must exist on each line.
 *
 * <p>Line 4.3 runs on this JVM's Kafka (what the connector is built against). Line 3.9 runs on the jars the
 * {@code connect-worker-3.9} module resolves into its {@code target/lib}. Both run on this JVM's Java.
 */
class WorkerLinesIT {
    private static final int EVENTS_BEFORE_START = 400;
    private static final int EVENTS_WHILE_RUNNING = 400;

    private FaultWorker worker;

    @AfterEach
    void stopWorker() {
        if (worker != null) {
            worker.close();
        }
    }

    @ParameterizedTest(name = "Kafka Connect {0}")
    @ValueSource(strings = {"3.9", "4.3"})
    void theArchiveRelaysEveryEventAndPublishesItsMetricsOnAWorkerOfTheLine(String line) throws Exception {
        String connector = "worker-line-" + line.replace('.', '-');
        Path plugins = ChildJvm.installReleaseArchive(connector);
        String bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        int jmxPort = ChildJvm.freePort();
        worker = FaultWorker.standalone(connector, bootstrap, plugins, classpath(line, plugins),
            ChildJvm.jmxArgs(jmxPort)).start();
        String version = worker.version();
        log("%s: worker pid %d runs Kafka %s on Java %s (log %s)", connector, worker.pid(), version,
            System.getProperty("java.version"), worker.log());
        assertThat(version).as("the worker's Kafka version").startsWith(line + ".");

        TestDatabase db = TestPostgres.get().createDatabase("worker_line_" + line.replace('.', '_'));
        FaultScenarios.insertEvents(db, EVENTS_BEFORE_START, 40);
        List<Subscription> subscriptions = FaultScenarios.subscriptions(connector);
        worker.configureConnector(connector, FaultScenarios.relayConfig(db, subscriptions, 1));
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(90), () -> worker.tasksRunning(connector, 1),
            () -> worker.statusJson(connector) + "\nworker log " + worker.log());
        FaultScenarios.insertEvents(db, EVENTS_WHILE_RUNNING, 40);
        FaultScenarios.awaitDrained(db, Duration.ofSeconds(120));

        FaultScenarios.logged("Kafka Connect " + version, OutboxLedger.check(db, bootstrap, subscriptions))
            .assertNothingLost().assertNoDuplicates().assertPerSubjectOrder();
        assertThat(OutboxLedger.poisoned(db)).isZero();

        boolean pluginMetrics = !line.startsWith("3.");
        try (JMXConnector jmx = ChildJvm.jmx(jmxPort)) {
            MBeanServerConnection mbeans = jmx.getMBeanServerConnection();
            ObjectName expected = pluginMetrics
                ? new ObjectName("kafka.connect:type=plugins,connector=" + connector + ",task=0,kind=relay")
                : new ObjectName("io.outboxrelay:type=\"relay\",connector=\"" + connector + "\",task=\"0\"");
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertThat(
                ((Number) mbeans.getAttribute(expected, "rows-fanned-total")).longValue())
                .as("rows-fanned-total of %s", expected).isEqualTo(EVENTS_BEFORE_START + EVENTS_WHILE_RUNNING));
            Set<ObjectName> relayMBeans = Stream.concat(
                    mbeans.queryNames(new ObjectName("kafka.connect:type=plugins,*"), null).stream(),
                    mbeans.queryNames(new ObjectName("io.outboxrelay:*"), null).stream())
                .filter(n -> n.getCanonicalName().contains(connector)).collect(Collectors.toSet());
            log("%s: relay MBeans %s", connector, relayMBeans);
            assertThat(relayMBeans).as("the relay's MBeans on Kafka %s (plugin metrics: %s)", version, pluginMetrics)
                .containsExactlyInAnyOrder(expected);
        }
    }

    /** The worker's classpath without the plugin: this JVM's Kafka for 4.3, the 3.9 module's jars for 3.9. */
    private static List<String> classpath(String line, Path plugins) {
        if (line.equals(AppInfoParser.getVersion().substring(0, line.length()))) {
            return ChildJvm.kafkaClasspath(ChildJvm.pluginJarNames(plugins));
        }
        Path lib = ProjectFiles.root().resolve("connect-worker-" + line).resolve("target").resolve("lib");
        if (!Files.isDirectory(lib)) {
            throw new IllegalStateException("no Kafka Connect " + line + " classpath at " + lib
                + "; build it first: ./mvnw -pl connect-worker-" + line + " package");
        }
        try (Stream<Path> jars = Files.list(lib)) {
            List<String> cp = jars.filter(p -> p.toString().endsWith(".jar")).map(Path::toString).sorted().toList();
            if (cp.stream().noneMatch(j -> Path.of(j).getFileName().toString().startsWith("connect-runtime-" + line))) {
                throw new IllegalStateException("no connect-runtime-" + line + ".*.jar in " + lib);
            }
            return cp;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
