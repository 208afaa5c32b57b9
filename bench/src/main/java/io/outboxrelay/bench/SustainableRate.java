package io.outboxrelay.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The rules of the sustainable-rate phase, apart from the running: when a step holds, when to stop stepping,
 * and what the steps add up to.
 *
 * <p>A step holds when the writers committed at least {@link #MIN_ACHIEVED} of the target rate, every event they
 * committed reached the consumer within the phase's wait, and the commit-to-consumer p99 is at most
 * {@link #MAX_P99_MS}. Stepping stops at the second failed step, or at a failed step whose failure was not the
 * latency alone (the writers could not keep the rate, or events were still undelivered: a higher step would
 * only fail more, or start on a backlog); so a contender whose p99 failed once gets one step more, to confirm.
 */
final class SustainableRate {
    static final double MIN_ACHIEVED = 0.95;
    static final double MAX_P99_MS = 250;
    private static final int MAX_FAILED_STEPS = 2;

    private SustainableRate() {
    }

    /** Judges one measured step. */
    static Results.SustainableStep step(int target, Results.Latency l) {
        List<String> why = new ArrayList<>();
        if (!writersKept(target, l)) {
            why.add(String.format("writers %,.0f/s = %.1f%% of the target (< %.0f%%)", l.achievedRate(),
                Math.floor(1000 * l.achievedRate() / target) / 10, 100 * MIN_ACHIEVED)); // floored: 94.98 is not 95.0
        }
        if (l.received() < l.sent()) {
            why.add(String.format("%,d of %,d events not delivered in time", l.sent() - l.received(), l.sent()));
        }
        if (!(l.p99Ms() <= MAX_P99_MS)) {
            why.add(String.format("p99 %,.0f ms > %.0f", l.p99Ms(), MAX_P99_MS));
        }
        return new Results.SustainableStep(target, l, why.isEmpty(), why.isEmpty() ? "holds" : String.join("; ", why));
    }

    private static boolean writersKept(int target, Results.Latency l) {
        return l.achievedRate() >= MIN_ACHIEVED * target;
    }

    /** Whether to run the next step after these. */
    static boolean keepStepping(List<Results.SustainableStep> steps) {
        if (steps.isEmpty()) {
            return true;
        }
        Results.SustainableStep last = steps.get(steps.size() - 1);
        if (last.holds()) {
            return true;
        }
        long failed = steps.stream().filter(s -> !s.holds()).count();
        boolean latencyAlone = writersKept(last.targetRate(), last.latency())
            && last.latency().received() >= last.latency().sent();
        return latencyAlone && failed < MAX_FAILED_STEPS;
    }

    /** The highest step held; 0 when none was. */
    static int sustainableRate(List<Results.SustainableStep> steps) {
        return steps.stream().filter(Results.SustainableStep::holds).mapToInt(Results.SustainableStep::targetRate)
            .max().orElse(0);
    }

    /** Whether p99 stayed within the bound, with every event delivered, at every step up to {@code rate}. */
    static boolean tailHeld(List<Results.SustainableStep> steps, int rate) {
        return steps.stream().filter(s -> s.targetRate() <= rate).allMatch(s -> s.latency().p99Ms() <= MAX_P99_MS
            && s.latency().received() >= s.latency().sent());
    }

    /** A contender's steps, summed up. */
    static Results.Sustainable summarize(String label, String kind, String variant, int tasks, int connections,
                                         List<Results.SustainableStep> steps, int stepsPlanned) {
        int rate = sustainableRate(steps);
        boolean all = steps.size() == stepsPlanned && steps.stream().allMatch(Results.SustainableStep::holds);
        return new Results.Sustainable(label, kind, variant, tasks, connections, List.copyOf(steps), rate, all,
            tailHeld(steps, rate));
    }

    /**
     * The rate to compare with: the sustainable rate, or for a contender that held no step the lowest step
     * (an upper bound of what it holds, so a ratio over it is conservative).
     */
    static int comparable(Results.Sustainable s) {
        if (s.sustainableRate() > 0 || s.steps().isEmpty()) {
            return s.sustainableRate();
        }
        return s.steps().get(0).targetRate();
    }
}
