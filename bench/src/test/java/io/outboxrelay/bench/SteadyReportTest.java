package io.outboxrelay.bench;

import static io.outboxrelay.bench.Fixtures.steadyStep;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SteadyReportTest {

    private static Results results() {
        Results r = new Results();
        r.volumes.put("steadyWriterConnections", 16);
        Results.SteadyStep none = steadyStep("none", "", "events", 500, 2_000, 400, 100, 0, Map.of());
        Results.SteadyStep relay = steadyStep("relay", "", "events", 500, 2_500, 1_000, 300, 3,
            Map.of(StatementKinds.CLAIM, 2_500L, StatementKinds.WAKEUP, 500L));
        Map<String, Object> claim = Map.of("kind", StatementKinds.CLAIM, "name", "ClaimRows", "calls", 2_500L,
            "totalMs", 5_000.0, "rows", 5_000L, "query", "WITH c AS (SELECT seq FROM \"events\" WHERE a | b)");
        Map<String, Object> writers = Map.of("kind", StatementKinds.WRITERS, "calls", 5_000L, "totalMs", 900.0,
            "rows", 5_000L, "query", "INSERT INTO events ...");
        relay = new Results.SteadyStep(relay.workload(), relay.rate(), relay.round(), relay.order(), relay.key(),
            "relay 2 tasks", relay.kind(), relay.variant(), relay.tasks(), relay.committed(), relay.windowCommits(),
            relay.achievedRate(), relay.received(), relay.missing(), relay.cpu(),
            new StatementCounts(relay.statements().callsByKind(), List.of(writers, claim)), relay.postgresByKindMs());
        r.steady.addAll(List.of(relay, none));
        r.steadyCosts.addAll(SteadyAccounting.costs(r.steady));
        return r;
    }

    @Test
    void eachRateHasTheWritersOwnCostAndEachContendersCostOverItWithDeliveryAndStatements() {
        String md = Report.markdown(results(), "t", "");

        assertThat(md).contains("## Steady rate: CPU per event over the writers alone", "**`events` at 500 events/s**");
        assertThat(md).contains("| none (per commit) | 500 (100%) | n/a | 400 | 80 | 20 | 500 | (reference) |");
        assertThat(md).contains("| relay 2 tasks | 500 (100%) | **3 missing** | 100 | 120 | 40 | **260** | 25% | 0.60 |"
            + " 0.50 / 0.00 / 0.10 / 0.00 |");
        assertThat(md).contains("![steady-rate CPU per event](steady.png)");
    }

    /** Below each rate's table, where each contender's PostgreSQL CPU went, by session kind, summing to the whole. */
    @Test
    void eachRateShowsPostgresCpuBySession() {
        Results r = results();
        Results.SteadyStep relay = r.steady.get(0);
        Results.SteadyStep none = r.steady.get(1);
        r.steady.set(0, new Results.SteadyStep(relay.workload(), relay.rate(), relay.round(), relay.order(),
            relay.key(), relay.label(), relay.kind(), relay.variant(), relay.tasks(), relay.committed(),
            relay.windowCommits(), relay.achievedRate(), relay.received(), relay.missing(), relay.cpu(),
            relay.statements(), java.util.Map.of(PostgresSessions.RELAY, 400L, PostgresSessions.WRITERS, 1_900L,
                PostgresSessions.RELAY_LISTEN, 100L, PostgresSessions.AUTOVACUUM, 100L)));
        r.steady.set(1, new Results.SteadyStep(none.workload(), none.rate(), none.round(), none.order(), none.key(),
            none.label(), none.kind(), none.variant(), none.tasks(), none.committed(), none.windowCommits(),
            none.achievedRate(), none.received(), none.missing(), none.cpu(), none.statements(),
            java.util.Map.of(PostgresSessions.WRITERS, 1_900L, PostgresSessions.AUTOVACUUM, 100L)));
        r.steadyCosts.clear();
        r.steadyCosts.addAll(SteadyAccounting.costs(r.steady));

        String md = Report.markdown(r, "t", "");

        assertThat(md).contains("| PostgreSQL us/event by session | relay sessions | relay LISTEN sessions |");
        assertThat(md).contains("| relay 2 tasks | 80 | 20 | 0 | 0 | 0 | 0 | 0 | 100 |");
    }

    /** What the JIT compilers still used in the measured windows, per setup, with two rounds pooled. */
    @Test
    void eachRateSaysWhatTheJitStillCompiledInItsWindows() {
        Results r = results();
        Results.SteadyStep relay = r.steady.get(0);
        r.steady.set(0, withJit(relay, 50));
        r.steady.add(withJit(relay, 150));

        String md = Report.markdown(r, "t", "");

        // 200 ms over two 10 s windows; the no-connector step compiled nothing
        assertThat(md).contains("JIT compiling of the worker and the broker in these windows (included above), ms/s:"
            + " relay 2 tasks 10.0; none 0.0.");
        assertThat(SteadyAccounting.pooled(List.of(r.steady.get(0), r.steady.get(2))).cpu().jitMs()).isEqualTo(200);
    }

    @Test
    void theHeaderListsEachContendersPrimingAndABudgetThatRanOut() {
        Results r = results();
        r.priming.add(new Results.Priming("steady", "relay 2 tasks", 1, 80.0, false));
        r.priming.add(new Results.Priming("steady", "relay 2 tasks", 2, 4.0, false));
        r.priming.add(new Results.Priming("latency", "Debezium tuned", 1, 20.0, true));

        String md = Report.markdown(r, "t", "");

        assertThat(md).contains("in two runs in a row): steady: relay 2 tasks 2 run(s), last 4.0 ms/s; latency:"
            + " Debezium tuned 1 run(s), last 20.0 ms/s (**budget ran out**).");
        // negative control: a run without priming says nothing about it
        assertThat(Report.markdown(results(), "t", "")).doesNotContain("Priming (");
    }

    private static Results.SteadyStep withJit(Results.SteadyStep s, long jitMs) {
        Results.Cpu c = s.cpu();
        Results.Cpu cpu = Results.Cpu.of(new CpuMeter.Sample(c.workerMs(), c.postgresMs(), c.brokerMs(), c.benchMs(),
            c.workerMs() + c.postgresMs() + c.brokerMs(), c.wallMs(), jitMs), s.windowCommits());
        return new Results.SteadyStep(s.workload(), s.rate(), s.round(), s.order(), s.key(), s.label(), s.kind(),
            s.variant(), s.tasks(), s.committed(), s.windowCommits(), s.achievedRate(), s.received(), s.missing(), cpu,
            s.statements(), s.postgresByKindMs());
    }

    @Test
    void theRelaysBusiestStatementsAreListedWithoutTheWritersOwn() {
        String md = Report.markdown(results(), "t", "");

        assertThat(md).contains("| relay 2 tasks, events @ 500/s | claim | ClaimRows | 0.50 | 2.00 |"
            + " `WITH c AS (SELECT seq FROM \"events\" WHERE a \\| b)` |");
        assertThat(md).doesNotContain("INSERT INTO events ...");
    }
}
