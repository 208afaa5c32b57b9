package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MonotonicClockTest {

    @Test
    void countsTheMonotonicNanosFromTheWallClockAtItsStart() {
        long[] nanos = {7_000_000_123L};
        MonotonicClock clock = new MonotonicClock(() -> nanos[0], 1_000);
        assertThat(clock.millis()).isEqualTo(1_000);
        nanos[0] += 2_500_000; // 2.5 ms later, whatever the wall clock did meanwhile
        assertThat(clock.millis()).isEqualTo(1_002);
        assertThat(clock.instant().toEpochMilli()).isEqualTo(1_002);
    }
}
