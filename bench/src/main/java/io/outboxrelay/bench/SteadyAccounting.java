package io.outboxrelay.bench;

import java.util.ArrayList;
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
        return cost(step, none, List.of(), List.of(), 1);
    }

    private static Results.SteadyCost cost(Results.SteadyStep step, Results.SteadyStep none, List<Double> totalByRound,
                                           List<Double> shareByRound, int rounds) {
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
        Map<String, Double> bySession = new LinkedHashMap<>();
        for (String kind : PostgresSessions.KINDS) {
            bySession.put(kind, Results.round1(overNone(step.postgresByKindMs().getOrDefault(kind, 0L), c,
                none.postgresByKindMs().getOrDefault(kind, 0L), n, eventsPerSec)));
        }
        return new Results.SteadyCost(step.workload(), step.rate(), step.key(), step.label(), step.kind(),
            step.variant(), step.tasks(), step.achievedRate(), step.missing(), Results.round1(pg),
            Results.round1(worker), Results.round1(broker), Results.round1(pg + worker + broker),
            Results.round1(writers), Results.round1(100 * pg / writers),
            perEvent(step.statements().connectorCalls(), step.windowCommits()), byKind,
            Math.max(c.othersCores(), n.othersCores()), rounds, bySession, totalByRound, shareByRound);
    }

    /** The no-connector step's PostgreSQL CPU per commit: what the writers' own transactions cost the server. */
    static double writersPostgresUsPerCommit(Results.SteadyStep none) {
        return cores(none.cpu().postgresMs(), none.cpu()) * 1e6 / (none.windowCommits() / seconds(none.cpu()));
    }

    /**
     * Every contender of {@code steps} costed against the no-connector step of its workload and rate. Steps of several
     * rounds are pooled first (their CPU, time and commits summed: a longer measurement), and each round is costed on
     * its own too, for the spread.
     */
    static List<Results.SteadyCost> costs(List<Results.SteadyStep> steps) {
        Map<String, List<Results.SteadyStep>> groups = new LinkedHashMap<>();
        for (Results.SteadyStep s : steps) {
            groups.computeIfAbsent(s.workload() + "|" + s.rate() + "|" + s.key(), k -> new ArrayList<>()).add(s);
        }
        List<Results.SteadyCost> out = new ArrayList<>();
        for (List<Results.SteadyStep> group : groups.values()) {
            Results.SteadyStep first = group.get(0);
            List<Results.SteadyStep> nones = groups.getOrDefault(first.workload() + "|" + first.rate() + "|none",
                List.of());
            if (first.kind().equals("none") || nones.isEmpty()) {
                continue;
            }
            List<Double> totals = new ArrayList<>();
            List<Double> shares = new ArrayList<>();
            for (Results.SteadyStep s : group) {
                Results.SteadyStep none = nones.stream().filter(n -> n.round() == s.round()).findFirst()
                    .orElse(nones.get(0));
                Results.SteadyCost one = cost(s, none);
                totals.add(one.totalUsPerEvent());
                shares.add(one.postgresShareOfWritersPct());
            }
            out.add(cost(pooled(group), pooled(nones), group.size() > 1 ? totals : List.of(),
                group.size() > 1 ? shares : List.of(), group.size()));
        }
        return out;
    }

    /** Steps of the same setup, workload and rate as one: CPU, time, commits and statements summed. */
    static Results.SteadyStep pooled(List<Results.SteadyStep> steps) {
        Results.SteadyStep f = steps.get(0);
        if (steps.size() == 1) {
            return f;
        }
        long[] ms = new long[7];
        long committed = 0;
        long window = 0;
        long received = 0;
        long missing = 0;
        StatementCounts statements = StatementCounts.NONE;
        Map<String, Long> byKind = new LinkedHashMap<>();
        for (Results.SteadyStep s : steps) {
            Results.Cpu c = s.cpu();
            ms[0] += c.workerMs();
            ms[1] += c.postgresMs();
            ms[2] += c.brokerMs();
            ms[3] += c.benchMs();
            ms[4] += c.othersMs();
            ms[5] += c.wallMs();
            ms[6] += c.jitMs();
            committed += s.committed();
            window += s.windowCommits();
            received = received < 0 || s.received() < 0 ? -1 : received + s.received();
            missing += s.missing();
            statements = statements.plus(s.statements());
            s.postgresByKindMs().forEach((k, v) -> byKind.merge(k, v, Long::sum));
        }
        Results.Cpu cpu = Results.Cpu.of(new CpuMeter.Sample(ms[0], ms[1], ms[2], ms[3], ms[4] + ms[0] + ms[1] + ms[2]
            + ms[3], ms[5], ms[6]), window);
        return new Results.SteadyStep(f.workload(), f.rate(), 0, f.order(), f.key(), f.label(), f.kind(), f.variant(),
            f.tasks(), committed, window, Results.round1(window / seconds(cpu)), received, missing, cpu, statements,
            byKind);
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
