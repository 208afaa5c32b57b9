package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MonotonicClockTest {
    private final long[] nanos = {7_000_000_123L};
    private final long[] wall = {1_000};
    private final MonotonicClock clock = new MonotonicClock(() -> nanos[0], () -> wall[0]);

    @Test
    void startsAtTheWallClockAndFollowsNanoTime() {
        assertThat(clock.millis()).isEqualTo(1_000);
        nanos[0] += 2_500_000;
        wall[0] += 2;
        assertThat(clock.millis()).isEqualTo(1_002);
        assertThat(clock.instant().toEpochMilli()).isEqualTo(1_002);
    }

    @Test
    void aWallClockSteppedBackDoesNotTakeItBack() {
        nanos[0] += 5_000_000;
        wall[0] -= 60_000; // NTP steps the wall clock a minute back
        assertThat(clock.millis()).isEqualTo(1_005);
        nanos[0] += 1_000_000;
        wall[0] += 1;
        assertThat(clock.millis()).isEqualTo(1_006);
    }

    @Test
    void aSuspendThatNanoTimeMissesStillPasses() {
        wall[0] += 30_000; // the host slept 30 s; CLOCK_MONOTONIC did not count it
        nanos[0] += 1_000_000;
        assertThat(clock.millis()).isEqualTo(31_000);
        nanos[0] += 1_000_000;
        wall[0] += 1;
        assertThat(clock.millis()).as("not counted twice").isEqualTo(31_001);
    }
}
