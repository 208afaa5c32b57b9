package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WakeSignalTest {
    @Test
    void aShortWaitLastsAtLeastItsTimeInsteadOfReturningAtOnce() throws Exception {
        WakeSignal wake = new WakeSignal();
        for (int i = 0; i < 20; i++) {
            long start = System.nanoTime();
            wake.await(1);
            assertThat(System.nanoTime() - start).as("a 1 ms wait, round %d", i).isGreaterThanOrEqualTo(1_000_000L);
        }
    }

    @Test
    void aSignalGivenBeforeTheWaitIsConsumedByIt() throws Exception {
        WakeSignal wake = new WakeSignal();
        wake.signal();
        long start = System.nanoTime();
        wake.await(60_000);
        assertThat(System.nanoTime() - start).as("returned on the signal, not after a minute").isLessThan(30_000_000_000L);
    }
}
