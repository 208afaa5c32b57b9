package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.MutableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** When passes fall due: start, notify, the periodic interval, and retries after backoff. */
class ScanTriggerTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-05-01T00:00:00Z"));
    private final ScanTrigger trigger = new ScanTrigger(clock, Duration.ofSeconds(60));

    @Test
    void hasNothingDueUntilAskedOrTheIntervalPassed() {
        assertThat(trigger.takeDue()).isNull();

        clock.advance(Duration.ofSeconds(59));
        assertThat(trigger.takeDue()).isNull();

        clock.advance(Duration.ofSeconds(1));
        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.PERIODIC);
        assertThat(trigger.takeDue()).isNull();
    }

    @Test
    void runsTheNextPeriodicPassOneIntervalAfterThePreviousOne() {
        clock.advance(Duration.ofSeconds(60));
        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.PERIODIC);

        clock.advance(Duration.ofSeconds(59));
        assertThat(trigger.takeDue()).isNull();
        clock.advance(Duration.ofSeconds(1));
        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.PERIODIC);
    }

    @Test
    void letsAFullPassCoverAPendingPeriodicOne() {
        clock.advance(Duration.ofSeconds(60));
        trigger.request(ScanTrigger.Kind.NOTIFY);

        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.NOTIFY);
        assertThat(trigger.takeDue()).isNull();
    }

    @Test
    void prefersTheStartPassAndCoalescesRequestsIntoOnePass() {
        trigger.request(ScanTrigger.Kind.NOTIFY);
        trigger.request(ScanTrigger.Kind.START);
        trigger.request(ScanTrigger.Kind.NOTIFY);

        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.START);
        assertThat(trigger.takeDue()).isNull();
    }

    @Test
    void keepsARequestThatArrivesDuringAPassForTheNextOne() {
        trigger.request(ScanTrigger.Kind.START);
        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.START);

        trigger.request(ScanTrigger.Kind.NOTIFY); // e.g. a NOTIFY while the start pass runs

        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.NOTIFY);
    }

    @Test
    void retriesAFailedPassOfTheSameKindOnlyAfterTheBackoff() {
        trigger.retryAfter(ScanTrigger.Kind.START, 2_000);
        trigger.request(ScanTrigger.Kind.NOTIFY);

        clock.advance(Duration.ofMillis(1_999));
        assertThat(trigger.takeDue()).isNull();

        clock.advance(Duration.ofMillis(1));
        assertThat(trigger.takeDue()).isEqualTo(ScanTrigger.Kind.START);
    }

    @Test
    void returnsFromAWaitAtOnceWhenSignalledBefore() throws InterruptedException {
        trigger.wake();
        long started = System.nanoTime();

        trigger.awaitSignal(Duration.ofSeconds(30));

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    }
}
