package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BackoffTest {
    @Test
    void startsAtTheInitialDelayDoublesAndIsCappedAtTheMax() {
        Backoff b = new Backoff(2_000, 60_000);
        assertThat(b.nextDelayMs()).isEqualTo(2_000);
        assertThat(b.nextDelayMs()).isEqualTo(4_000);
        assertThat(b.nextDelayMs()).isEqualTo(8_000);
        assertThat(b.nextDelayMs()).isEqualTo(16_000);
        assertThat(b.nextDelayMs()).isEqualTo(32_000);
        assertThat(b.nextDelayMs()).isEqualTo(60_000);
        assertThat(b.nextDelayMs()).isEqualTo(60_000);
        b.reset();
        assertThat(b.nextDelayMs()).isEqualTo(2_000);
    }

    @Test
    void theDelayOfAnAttemptNeverOverflows() {
        assertThat(Backoff.delayMs(2_000, 60_000, 1)).isEqualTo(2_000);
        assertThat(Backoff.delayMs(2_000, 60_000, 3)).isEqualTo(8_000);
        assertThat(Backoff.delayMs(2_000, 60_000, 1_000)).isEqualTo(60_000);
    }
}
