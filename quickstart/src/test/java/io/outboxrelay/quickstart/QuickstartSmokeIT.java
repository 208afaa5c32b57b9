package io.outboxrelay.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Runs the quickstart as {@code ./quickstart.sh --duration=20} does, in this JVM, and checks what a
 * newcomer is told: events reach every subscriber topic, each matching event is delivered or coalesced,
 * and the mentions the demo chat server never routed are recovered. Guards against the quickstart
 * rotting while the connector, its config keys or the schema files change.
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
}
