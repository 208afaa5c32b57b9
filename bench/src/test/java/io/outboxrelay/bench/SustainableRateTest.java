package io.outboxrelay.bench;

import static io.outboxrelay.bench.Fixtures.latency;
import static io.outboxrelay.bench.Fixtures.step;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SustainableRateTest {

    @Test
    void aStepHoldsWhenTheWritersKeepTheRateEveryEventArrivesAndP99IsWithinTheBound() {
        Results.SustainableStep s = SustainableRate.step(5000, latency("relay", "", 5000, 4750, 75_000, 75_000, 250));

        assertThat(s.holds()).isTrue();
        assertThat(s.verdict()).isEqualTo("holds");
    }

    @Test
    void writersBelow95PercentOfTheTargetFailTheStep() {
        Results.SustainableStep s = SustainableRate.step(5000, latency("relay", "", 5000, 4749, 71_235, 71_235, 12));

        assertThat(s.holds()).isFalse();
        assertThat(s.verdict()).isEqualTo("writers 4,749/s = 94.9% of the target (< 95%)");
    }

    @Test
    void p99AboveTheBoundFailsTheStep() {
        Results.SustainableStep s = SustainableRate.step(1000, latency("debezium", "", 1000, 1000, 15_000, 15_000,
            250.01));

        assertThat(s.holds()).isFalse();
        assertThat(s.verdict()).isEqualTo("p99 250 ms > 250");
    }

    @Test
    void anEventNotDeliveredFailsTheStepEvenWithAGoodP99OverTheOthers() {
        Results.SustainableStep s = SustainableRate.step(3000, latency("relay", "", 3000, 3000, 45_000, 44_999, 20));

        assertThat(s.holds()).isFalse();
        assertThat(s.verdict()).isEqualTo("1 of 45,000 events not delivered in time");
    }

    @Test
    void anUnmeasuredP99FailsTheStep() {
        Results.SustainableStep s = SustainableRate.step(500, latency("relay", "", 500, 500, 0, 0, Double.NaN));

        assertThat(s.holds()).isFalse();
    }

    @Test
    void steppingGoesOnWhileStepsHold() {
        assertThat(SustainableRate.keepStepping(List.of())).isTrue();
        assertThat(SustainableRate.keepStepping(List.of(step(500, 5), step(1000, 6)))).isTrue();
    }

    @Test
    void aFirstFailureOnLatencyAloneGetsOneStepMoreToConfirm() {
        List<Results.SustainableStep> steps = new ArrayList<>(List.of(step(500, 5), step(1000, 400)));
        assertThat(SustainableRate.keepStepping(steps)).isTrue();

        steps.add(step(2000, 500));
        assertThat(SustainableRate.keepStepping(steps)).as("second failure").isFalse();
    }

    @Test
    void aConfirmingStepThatHoldsLetsSteppingGoOnUntilTheNextFailure() {
        List<Results.SustainableStep> steps = new ArrayList<>(List.of(step(500, 5), step(1000, 400), step(2000, 9)));
        assertThat(SustainableRate.keepStepping(steps)).isTrue();

        steps.add(step(3000, 300));
        assertThat(SustainableRate.keepStepping(steps)).as("the second failed step of the contender").isFalse();
    }

    @Test
    void aFailureOfTheWritersStopsAtOnce() {
        Results.SustainableStep writersShort = SustainableRate.step(7000,
            latency("relay", "", 7000, 6000, 90_000, 90_000, 30));

        assertThat(SustainableRate.keepStepping(List.of(step(5000, 20), writersShort))).isFalse();
    }

    @Test
    void undeliveredEventsStopAtOnceSinceTheNextStepWouldStartOnABacklog() {
        Results.SustainableStep behind = SustainableRate.step(7000,
            latency("relay", "", 7000, 7000, 105_000, 90_000, 30));

        assertThat(SustainableRate.keepStepping(List.of(step(5000, 20), behind))).isFalse();
    }

    @Test
    void theSustainableRateIsTheHighestStepHeldAndTheTailIsCheckedAtEveryStepUpToIt() {
        Results.Sustainable blip = Fixtures.sustainable("relay", "", 5, 400, 9, 12, 40, 600, 900);

        assertThat(blip.sustainableRate()).isEqualTo(5000);
        assertThat(blip.heldEveryStep()).isFalse();
        assertThat(blip.tailHeld()).as("1,000/s failed its p99 below the rate").isFalse();

        Results.Sustainable clean = Fixtures.sustainable("relay", "", 5, 6, 9, 12, 40, 600, 900);
        assertThat(clean.sustainableRate()).isEqualTo(5000);
        assertThat(clean.tailHeld()).isTrue();
    }

    @Test
    void aContenderThatHeldNothingIsComparedAtItsLowestStep() {
        Results.Sustainable none = Fixtures.sustainable("debezium", "", 800, 820);

        assertThat(none.sustainableRate()).isZero();
        assertThat(SustainableRate.comparable(none)).isEqualTo(500);
        assertThat(SustainableRate.comparable(Fixtures.sustainable("relay", "", 5, 6, 400, 500))).isEqualTo(1000);
    }

    @Test
    void heldEveryStepOnlyWhenEveryPlannedStepRanAndHeld() {
        double[] all = new double[BenchOptions.SUSTAINABLE_RATES.size()];
        java.util.Arrays.fill(all, 10);

        assertThat(Fixtures.sustainable("relay", "", all).heldEveryStep()).isTrue();
        assertThat(Fixtures.sustainable("relay", "", 10, 10).heldEveryStep()).as("stopped early").isFalse();
    }
}
