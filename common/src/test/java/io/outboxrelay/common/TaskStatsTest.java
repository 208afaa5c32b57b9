package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

class TaskStatsTest {
    private final MockTime time = new MockTime();
    private final TaskStats stats = new TaskStats(time);

    @Test
    void aMaximumLeavesTheWindowThirtySecondsAfterItWasRecorded() {
        Sensor latency = stats.durations("latency", "Last", "Longest");
        latency.record(40);
        time.sleep(20_000);
        latency.record(10);

        time.sleep(9_000); // 29 s after the 40
        assertThat(stats.value("latency-max-ms")).isEqualTo(40);
        time.sleep(2_500); // 31.5 s after the 40, 11.5 s after the 10
        assertThat(stats.value("latency-max-ms")).as("the 40 left the window, the 10 is in it").isEqualTo(10);
        time.sleep(20_000);
        assertThat(stats.value("latency-max-ms")).as("nothing recorded in the window").isZero();
    }

    @Test
    void aTotalKeepsEverythingSinceTheStartWhileTheRateForgets() {
        Sensor rows = stats.totalAndRate("rows", "Rows", "Rows per second");
        rows.record(300);
        time.sleep(1_000);
        assertThat(stats.value("rows-rate")).as("divided by the whole window, not by the 1 s elapsed")
            .isEqualTo(10.0, within(0.01));

        time.sleep(40_000);
        assertThat(stats.value("rows-rate")).isZero();
        assertThat(stats.value("rows-total")).isEqualTo(300);
    }

    @Test
    void aSteadyRateIsMeasuredAsItIs() {
        Sensor rows = stats.totalAndRate("rows", "Rows", "Rows per second");
        for (int second = 0; second < 90; second++) {
            rows.record(100);
            time.sleep(1_000);
        }
        // one-second samples: the window's edge moves in steps of one sample, 1/30 of the rate at most
        assertThat(stats.value("rows-rate")).isEqualTo(100.0, within(100.0 / 30));
    }

    @Test
    void aCountCountsRecordingsAndTheLastValueIsTheLatest() {
        Sensor sweeps = stats.count("sweeps", "Sweeps");
        Sensor claimMs = stats.durations("claim", "Last claim", "Longest claim");
        assertThat(stats.value("claim-last-ms")).as("before the first").isZero();
        sweeps.record();
        sweeps.record();
        claimMs.record(7);
        claimMs.record(3);
        time.sleep(60_000);
        assertThat(stats.value("sweeps-total")).isEqualTo(2);
        assertThat(stats.value("claim-last-ms")).as("the last, not the largest, and not windowed").isEqualTo(3);
    }

    @Test
    void theDescriptionOfAWindowedMetricSaysTheWindow() {
        stats.totalAndRate("rows", "Rows", "Rows per second");
        stats.durations("claim", "Last claim", "Longest claim");
        assertThat(stats.published().get("rows-rate").description()).isEqualTo("Rows per second (last 30 s)");
        assertThat(stats.published().get("claim-max-ms").description())
            .isEqualTo("Longest claim (last 30 s; 0 when none)");
        assertThat(stats.published().get("rows-total").description()).isEqualTo("Rows");
        assertThat(stats.published().get("claim-last-ms").description()).isEqualTo("Last claim");
        assertThat(stats.published()).containsOnlyKeys("rows-rate", "rows-total", "claim-last-ms", "claim-max-ms");
    }

    @Test
    void aNameIsPublishedOnce() {
        stats.gauge("backlog", "Backlog", () -> 1);
        assertThatThrownBy(() -> stats.gauge("backlog", "Backlog again", () -> 2))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("backlog");
        assertThatThrownBy(() -> stats.value("nope")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("backlog");
    }
}
