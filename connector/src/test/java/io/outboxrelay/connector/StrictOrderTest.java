package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

/** outbox.ordering: its default, what is refused, and what a poisoned row tells under strict order. */
class StrictOrderTest {
    private final RelayMetrics metrics = new RelayMetrics(new MockTime());
    private final AtomicInteger claimsAsked = new AtomicInteger();

    private static PoisonedRow poisoned(long seq, String subject) {
        return new PoisonedRow(seq, "id-" + seq, "order.created", subject, 5, 0, 0, "test");
    }

    @Test
    void theDefaultIsBestEffortAndStrictIsOptIn() {
        assertThat(TestConfigs.minimal().strictOrdering()).isFalse();
        assertThat(TestConfigs.minimal("outbox.ordering", "best-effort").strictOrdering()).isFalse();
        assertThat(TestConfigs.minimal("outbox.ordering", "strict").strictOrdering()).isTrue();
        assertThat(TestConfigs.minimal("outbox.ordering", " Strict ").strictOrdering()).isTrue();
    }

    @Test
    void underStrictOrderABusyTaskKeepsTheShortestPace() {
        // one row a claim per subject: few rows a claim would stretch the pace and halve a hot subject's drain
        assertThat(TestConfigs.minimal().lingerMaxMs()).isEqualTo(OutboxSourceConnectorConfig.DEFAULT_LINGER_MAX_MS);
        assertThat(TestConfigs.minimal("outbox.ordering", "strict").lingerMaxMs())
            .isEqualTo(OutboxSourceConnectorConfig.DEFAULT_LINGER_MS);
        assertThat(TestConfigs.minimal("outbox.ordering", "strict", "outbox.linger.max.ms", "50").lingerMaxMs())
            .isEqualTo(OutboxSourceConnectorConfig.DEFAULT_LINGER_MS);
        assertThat(TestConfigs.minimal("outbox.linger.max.ms", "50").lingerMaxMs()).as("the control").isEqualTo(50);
    }

    @Test
    void anUnknownOrderingIsRefusedWithTheChoices() {
        assertThatThrownBy(() -> TestConfigs.minimal("outbox.ordering", "total"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("outbox.ordering")
            .hasMessageContaining("best-effort, strict");
    }

    @Test
    void underStrictOrderEachPoisonedRowReleasesItsSubjectIsNamedInTheMetricsAndAClaimIsAsked() {
        new StrictOrder(true, metrics, claimsAsked::incrementAndGet).poisoned(List.of(poisoned(7, "order-1"),
            poisoned(12, "order-2")));

        assertThat(metrics.value("strict-subjects-released-total")).isEqualTo(2);
        assertThat(metrics.lastReleasedSeq.get()).isEqualTo(12);
        assertThat(claimsAsked).hasValue(1);
    }

    @Test
    void bestEffortReleasesNothingBecauseItNeverHeldASubjectBack() {
        new StrictOrder(false, metrics, claimsAsked::incrementAndGet).poisoned(List.of(poisoned(7, "order-1")));

        assertThat(metrics.value("strict-subjects-released-total")).isZero();
        assertThat(metrics.lastReleasedSeq.get()).isEqualTo(-1);
        assertThat(claimsAsked).hasValue(0);
    }
}
