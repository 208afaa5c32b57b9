package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import java.util.Map;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

class RelayMetricsTest {
    /** The names the monitoring kit, the README and the operators' dashboards read. */
    private static final String[] PER_TASK = {"rows-claimed-total", "rows-claimed-rate", "rows-fanned-total",
        "rows-fanned-rate", "rows-poisoned-total", "rows-poisoned-rate", "rows-failed-total", "rows-retried-total",
        "lease-expiries-total", "rows-retained-deleted-total", "partitions-dropped-total", "rows-in-flight", "claim-latency-last-ms",
        "claim-latency-max-ms", "claim-size", "claim-size-max", "stamp-latency-last-ms", "stamp-latency-max-ms",
        "notify-wakeups-total", "sweeps-total", "strict-subjects-released-total", "strict-last-released-seq",
        "listen-hears-nothing"};

    private final MockTime time = new MockTime();
    private final RelayMetrics metrics = new RelayMetrics(time);

    @Test
    void publishesTheNamesItAlwaysHadAndTheTableWideOnesFromOneTaskOnly() {
        assertThat(metrics.gauges(() -> 0, false, () -> false)).containsOnlyKeys(PER_TASK);
        assertThat(metrics.gauges(() -> 0, true, () -> false)).containsKeys(PER_TASK)
            .containsKeys("backlog-rows", "oldest-unfanned-age-ms", "partitions-kept").hasSize(PER_TASK.length + 3);
    }

    @Test
    void claimsAndStampsFeedTheirTotalsRatesAndLatencies() {
        metrics.claimed(200, 12);
        metrics.claimed(100, 5);
        metrics.stamped(300, 30);
        time.sleep(1_000);
        Map<String, Metric> m = metrics.gauges(() -> 7, false, () -> false);

        assertThat(read(m, "rows-claimed-total")).isEqualTo(300);
        assertThat(read(m, "rows-claimed-rate")).isEqualTo(10.0, within(0.01));
        assertThat(read(m, "claim-latency-last-ms")).isEqualTo(5);
        assertThat(read(m, "claim-latency-max-ms")).isEqualTo(12);
        assertThat(read(m, "rows-fanned-total")).isEqualTo(300);
        assertThat(read(m, "stamp-latency-max-ms")).isEqualTo(30);
        assertThat(read(m, "rows-in-flight")).isEqualTo(7);
        assertThat(metrics.summary()).startsWith("claimed 300, stamped 300, failed 0, poisoned 0");
    }

    @Test
    void theLatencyMaximaForgetASlowStatementAfterThirtySecondsAndTheTotalsDoNot() {
        metrics.claimed(10, 900);
        metrics.stamped(10, 800);
        time.sleep(10_000);
        metrics.claimed(10, 4);
        time.sleep(21_000); // 31 s after the slow ones
        Map<String, Metric> m = metrics.gauges(() -> 0, false, () -> false);

        assertThat(read(m, "claim-latency-max-ms")).as("only the 4 ms claim is in the window").isEqualTo(4);
        assertThat(read(m, "stamp-latency-max-ms")).as("no stamp in the window").isZero();
        assertThat(read(m, "stamp-latency-last-ms")).isEqualTo(800);
        assertThat(read(m, "rows-claimed-total")).isEqualTo(20);
        assertThat(read(m, "rows-fanned-total")).isEqualTo(10);
    }

    @Test
    void eventsAreCountedOncePerCallAndRowsByTheirNumber() {
        metrics.notifyWakeup();
        metrics.notifyWakeup();
        metrics.sweep();
        metrics.leaseExpired(0);
        metrics.leaseExpired(3);
        metrics.retried(2);
        metrics.failed(4);
        metrics.poisoned(1);
        metrics.retained(1_000);
        metrics.claimSize(400, 200);
        metrics.claimSize(100, 800);
        Map<String, Metric> m = metrics.gauges(() -> 0, false, () -> false);

        assertThat(read(m, "notify-wakeups-total")).isEqualTo(2);
        assertThat(read(m, "sweeps-total")).isEqualTo(1);
        assertThat(read(m, "lease-expiries-total")).isEqualTo(3);
        assertThat(read(m, "rows-retried-total")).isEqualTo(2);
        assertThat(read(m, "rows-failed-total")).isEqualTo(4);
        assertThat(read(m, "rows-poisoned-total")).isEqualTo(1);
        assertThat(read(m, "rows-retained-deleted-total")).isEqualTo(1_000);
        assertThat(read(m, "claim-size")).isEqualTo(100);
        assertThat(read(m, "claim-size-max")).isEqualTo(800);
    }

    @Test
    void listenHearsNothingReadsTheSessionEachTime() {
        boolean[] deaf = {false};
        Map<String, Metric> m = metrics.gauges(() -> 0, false, () -> deaf[0]);
        assertThat(read(m, "listen-hears-nothing")).isZero();
        deaf[0] = true;
        assertThat(read(m, "listen-hears-nothing")).isEqualTo(1);
    }

    private static double read(Map<String, Metric> metrics, String name) {
        return metrics.get(name).value().get().doubleValue();
    }
}
