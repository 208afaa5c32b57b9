package io.outboxrelay.bench;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a contender costs at a steady rate, from its step and the no-connector step of the same workload and rate.
 * Each party's CPU is taken per second of the window (cores), the no-connector step's is subtracted, and the
 * difference is divided by the contender step's commits per second: CPU per relayed event over what the writers
 * alone use. Per second, not per window, so windows a few ms apart in length compare.
 */
final class SteadyAccounting {
    /** Rates ascending; within a rate the relay, its variants, Debezium tuned, Debezium: the order of the tables. */
    static final Comparator<Results.SteadyCost> BY_RATE_THEN_CONTENDER = Comparator
        .comparingInt(Results.SteadyCost::rate).thenComparingInt(SteadyAccounting::rank);

    private SteadyAccounting() {
    }

    private static int rank(Results.SteadyCost c) {
        if (c.kind().equals("relay")) {
            return c.variant().isEmpty() ? 0 : 1;
        }
        return c.variant().equals(DebeziumContender.TUNED_VARIANT) ? 2 : 3;
    }

    static Results.SteadyCost cost(Results.SteadyStep step, Results.SteadyStep none) {
        Results.Cpu c = step.cpu();
        Results.Cpu n = none.cpu();
        double eventsPerSec = step.windowCommits() / seconds(c);
        double pg = overNone(c.postgresMs(), c, n.postgresMs(), n, eventsPerSec);
        double worker = overNone(c.workerMs(), c, n.workerMs(), n, eventsPerSec);
        double broker = overNone(c.brokerMs(), c, n.brokerMs(), n, eventsPerSec);
        double writers = writersPostgresUsPerCommit(none);
        Map<String, Double> byKind = new LinkedHashMap<>();
        for (String kind : StatementCounts.CONNECTOR_KINDS) {
            byKind.put(kind, perEvent(step.statements().calls(kind), step.windowCommits()));
        }
        byKind.put(StatementKinds.NESTED, perEvent(step.statements().calls(StatementKinds.NESTED),
            step.windowCommits()));
        return new Results.SteadyCost(step.workload(), step.rate(), step.key(), step.label(), step.kind(),
            step.variant(), step.tasks(), step.achievedRate(), step.missing(), Results.round1(pg),
            Results.round1(worker), Results.round1(broker), Results.round1(pg + worker + broker),
            Results.round1(writers), Results.round1(100 * pg / writers),
            perEvent(step.statements().connectorCalls(), step.windowCommits()), byKind,
            Math.max(c.othersCores(), n.othersCores()));
    }

    /** The no-connector step's PostgreSQL CPU per commit: what the writers' own transactions cost the server. */
    static double writersPostgresUsPerCommit(Results.SteadyStep none) {
        return cores(none.cpu().postgresMs(), none.cpu()) * 1e6 / (none.windowCommits() / seconds(none.cpu()));
    }

    /** Every contender step of {@code steps} costed against the no-connector step of its workload and rate. */
    static List<Results.SteadyCost> costs(List<Results.SteadyStep> steps) {
        return steps.stream().filter(s -> !s.kind().equals("none")).flatMap(s -> steps.stream()
            .filter(n -> n.kind().equals("none") && n.workload().equals(s.workload()) && n.rate() == s.rate())
            .findFirst().map(n -> cost(s, n)).stream()).toList();
    }

    private static double overNone(long ms, Results.Cpu c, long noneMs, Results.Cpu n, double eventsPerSec) {
        return (cores(ms, c) - cores(noneMs, n)) * 1e6 / eventsPerSec;
    }

    private static double cores(long ms, Results.Cpu over) {
        return ms / (double) Math.max(1, over.wallMs());
    }

    private static double seconds(Results.Cpu over) {
        return Math.max(1, over.wallMs()) / 1000.0;
    }

    private static double perEvent(long calls, long events) {
        return Results.round2(calls / (double) Math.max(1, events));
    }
}
