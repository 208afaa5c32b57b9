package io.outboxrelay.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.List;
import org.junit.jupiter.api.Test;

class CpuMeterTest {

    @Test
    void aChildReapedWhileTheLiveOnesAreReadIsCountedOnceNotTwiceOrNever() {
        // first try: the parent reads 100, the live children 70 (the one about to exit included: 30), then it is
        // reaped and the parent reads 130; second try: 130 and 40, stable
        ArrayDeque<Long> parent = new ArrayDeque<>(List.of(100L, 130L, 130L, 130L));
        ArrayDeque<Long> live = new ArrayDeque<>(List.of(70L, 40L));

        assertThat(CpuMeter.consistentTotal(parent::poll, live::poll)).isEqualTo(170);
    }

    @Test
    void aStableReadingIsTakenAtOnce() {
        ArrayDeque<Long> parent = new ArrayDeque<>(List.of(100L, 100L));
        ArrayDeque<Long> live = new ArrayDeque<>(List.of(70L));

        assertThat(CpuMeter.consistentTotal(parent::poll, live::poll)).isEqualTo(170);
    }
}
