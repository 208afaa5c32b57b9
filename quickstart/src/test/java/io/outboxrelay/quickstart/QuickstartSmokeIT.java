package io.outboxrelay.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Runs the quickstart as {@code ./quickstart.sh --duration=20} does, in this JVM, and checks what a
 * newcomer is told: events reach every subscriber topic, each matching event is delivered or coalesced,
 * and the mentions the demo chat server never routed are recovered; and stops one by a signal, as Ctrl-C does.
 * Guards against the quickstart rotting while the connector, its config keys or the schema files change. One class:
 * two quickstarts at once would share its fixed ports.
 */
class QuickstartSmokeIT {

    @Test
    void eventsReachEverySubscriberAndUnroutedMentionsAreRecovered() throws Exception {
        QuickstartSummary summary = new Quickstart(QuickstartOptions.forDuration(Duration.ofSeconds(20)), System.out).run();

        assertThat(summary).isNotNull();
        assertThat(summary.failure()).as("connector or task failure").isNull();
        assertThat(summary.written()).as("events the demo shop committed").isGreaterThan(100);
        assertThat(summary.poisoned()).isZero();
        assertThat(summary.subscriptions()).hasSize(3);
        summary.subscriptions().forEach((name, counts) ->
            assertThat(counts.records()).as("records on %s (subscription %s)", counts.topic(), name).isPositive());
        assertThat(summary.everyEventAccountedFor()).as("delivered + coalesced = matching, per subscription").isTrue();
        assertThat(summary.subscriptions().get("search-index").coalesced()).as("coalesced by search-index").isPositive();
        assertThat(summary.mentionRecords()).as("recovered mention records").isPositive();
        assertThat(summary.mentionActions()).containsKeys("OWED", "WAKE", "STEER");
        assertThat(summary.owedRows()).isPositive();
    }

    /**
     * Stops a running quickstart as Ctrl-C does (a signal: the JVM's shutdown hooks run), in a process of its own, and
     * reads what the newcomer is told. Found by a user trial: Connect's REST server stopped itself at the signal, through
     * a shutdown hook of Jetty's, before the quickstart could delete the connector, and the summary said FAILED, "the
     * connector is gone", and "connector deleted" although no DELETE had reached the worker.
     */
    @Test
    void aSignalDeletesTheConnectorStopsEverythingAndReportsNoFailure() throws Exception {
        Path log = Files.createTempFile("quickstart-signal", ".log");
        Process quickstart = new ProcessBuilder(
            Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"),
            "-D" + QuickstartOptions.HOME_PROPERTY + "=" + QuickstartOptions.findHome(),
            "-Dquickstart.log=" + log,
            Quickstart.class.getName(), "--rate=50")
            .redirectErrorStream(true).start();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                new InputStreamReader(quickstart.getInputStream(), StandardCharsets.UTF_8))) {
                in.lines().forEach(lines::add);
            } catch (java.io.IOException e) {
                lines.add("(output unreadable: " + e + ")");
            }
        });
        reader.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            while (lines.stream().noneMatch(l -> l.matches("\\s+2s \\|.*")) && quickstart.isAlive()
                && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(100); // its progress lines: the connector runs and relays
            }
            assertThat(quickstart.isAlive()).as("running, output: %s", lines).isTrue();

            // SIGTERM, the same shutdown hooks as Ctrl-C's SIGINT (through the handle: Process.destroy also closes
            // the output this test still reads)
            assertThat(quickstart.toHandle().destroy()).isTrue();
            assertThat(quickstart.waitFor(120, TimeUnit.SECONDS)).as("stopped, output: %s", lines).isTrue();
            reader.join(TimeUnit.SECONDS.toMillis(10));
        } finally {
            quickstart.destroyForcibly();
            Files.deleteIfExists(log);
        }

        String output = String.join("\n", lines);
        assertThat(output).contains("Summary after").contains("connector deleted, Connect worker stopped")
            .doesNotContain("FAILED").doesNotContain("the connector is gone");
    }
}
