package io.outboxrelay.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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

    @Test
    void theJitTimeIsTheCompilerThreadsOfTheWorkerAndTheBrokerOnly() throws Exception {
        assumeTrue(CpuMeter.available(), "reads /proc");
        // this test JVM has compiled JUnit, AssertJ and the bench's classes: its C1/C2 threads used more than a tick
        long self = ProcessHandle.current().pid();
        long compiled = new CpuMeter(self, -1, -1).jitMs();
        assertThat(compiled).isPositive();
        assertThat(new CpuMeter(-1, -1, self).jitMs()).isGreaterThanOrEqualTo(compiled);
        // and only those: the threads that ran the tests and loaded the classes are not in it
        long whole = ProcessHandle.current().info().totalCpuDuration().orElseThrow().toMillis();
        assertThat(new CpuMeter(self, -1, -1).jitMs()).isLessThan(whole);
        // a process without compiler threads reads 0
        Process sleep = new ProcessBuilder("sleep", "30").start();
        try {
            assertThat(new CpuMeter(sleep.pid(), -1, sleep.pid()).jitMs()).isZero();
        } finally {
            sleep.destroy();
        }
        assertThat(CpuMeter.machine().jitMs()).isZero();
    }
}
