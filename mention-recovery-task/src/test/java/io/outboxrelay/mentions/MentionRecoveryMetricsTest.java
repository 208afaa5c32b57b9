package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MentionRecoveryMetricsTest {
    private final MentionRecoveryMetrics metrics = new MentionRecoveryMetrics();

    @Test
    void publishesTheNamesTheMonitoringKitReads() {
        assertThat(metrics.gauges(() -> false)).containsOnlyKeys("messages-scanned-total", "messages-marked-total",
            "message-faults-total", "mentions-recovered-steer-total", "mentions-recovered-owed-total",
            "mentions-recovered-wake-total", "passes-completed-total", "passes-failed-total", "marks-failed-total",
            "last-pass-duration-ms", "listen-hears-nothing");
    }

    @Test
    void listenHearsNothingReadsTheSessionEachTime() {
        boolean[] deaf = {false};
        Map<String, Metric> m = metrics.gauges(() -> deaf[0]);
        assertThat(read(m, "listen-hears-nothing")).isZero();
        deaf[0] = true;
        assertThat(read(m, "listen-hears-nothing")).isEqualTo(1);
    }

    @Test
    void thePublishedValuesAreTheTotalsTheTaskReads() {
        metrics.scanned(5);
        metrics.marked(3);
        metrics.faults(1);
        metrics.recovered(Arm.OWED, 2);
        metrics.recovered(Arm.WAKE, 1);
        metrics.passCompleted(40);
        metrics.passCompleted(25);
        metrics.passFailed();
        metrics.markFailed();
        metrics.markFailed();
        Map<String, Metric> m = metrics.gauges(() -> false);

        assertThat(read(m, "messages-scanned-total")).isEqualTo(5).isEqualTo(metrics.messagesScanned());
        assertThat(read(m, "messages-marked-total")).isEqualTo(3).isEqualTo(metrics.messagesMarked());
        assertThat(read(m, "message-faults-total")).isEqualTo(1).isEqualTo(metrics.messageFaults());
        assertThat(read(m, "mentions-recovered-owed-total")).isEqualTo(2);
        assertThat(read(m, "mentions-recovered-steer-total")).isZero();
        assertThat(metrics.recoveredTotal()).isEqualTo(3);
        assertThat(read(m, "passes-completed-total")).isEqualTo(2);
        assertThat(read(m, "passes-failed-total")).isEqualTo(1);
        assertThat(read(m, "marks-failed-total")).isEqualTo(2).isEqualTo(metrics.marksFailed());
        assertThat(read(m, "last-pass-duration-ms")).isEqualTo(25);
    }

    @Test
    void theLastPassDurationIsMinusOneBeforeTheFirstPass() {
        assertThat(read(metrics.gauges(() -> false), "last-pass-duration-ms")).isEqualTo(-1);
    }

    private static double read(Map<String, Metric> metrics, String name) {
        return metrics.get(name).value().get().doubleValue();
    }
}
