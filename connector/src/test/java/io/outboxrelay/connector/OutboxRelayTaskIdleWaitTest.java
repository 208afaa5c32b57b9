package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OutboxRelayTaskIdleWaitTest {

    @Test
    void withoutListenAnIdleTaskWakesWhenTheNextPollIsDue() {
        assertThat(OutboxRelayTask.idleWaitMs(1_000, 60_000, 1_010, false)).isEqualTo(10);
    }

    @Test
    void withListenOnlyTheSweepAndTheIdleCapBoundTheWait() {
        assertThat(OutboxRelayTask.idleWaitMs(1_000, 60_000, 1_010, true)).isEqualTo(OutboxRelayTask.MAX_IDLE_WAIT_MS);
        assertThat(OutboxRelayTask.idleWaitMs(1_000, 1_020, 1_500, true)).isEqualTo(20);
    }

    @Test
    void anOverdueDeadlineWaitsOneMillisecondNotZero() {
        assertThat(OutboxRelayTask.idleWaitMs(2_000, 1_000, 1_000, false)).isEqualTo(1);
    }
}
