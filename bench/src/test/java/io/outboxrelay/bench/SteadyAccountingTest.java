package io.outboxrelay.bench;

import static io.outboxrelay.bench.Fixtures.steadyStep;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SteadyAccountingTest {

    @Test
    void eachPartysCostIsItsCpuPerSecondOverTheWritersAlonePerEventRelayed() {
        // 500/s over 10 s: writers alone 2,000 ms of PostgreSQL = 400 us per commit
        Results.SteadyStep none = steadyStep("none", "", "events", 500, 2_000, 400, 100, 0, Map.of());
        Results.SteadyStep relay = steadyStep("relay", "", "events", 500, 2_500, 1_000, 300, 0,
            Map.of(StatementKinds.CLAIM, 2_500L, StatementKinds.STAMP, 1_000L, StatementKinds.WRITERS, 5_000L,
                StatementKinds.NESTED, 5_000L));

        Results.SteadyCost c = SteadyAccounting.cost(relay, none);

        assertThat(c.postgresUsPerEvent()).isEqualTo(100);
        assertThat(c.workerUsPerEvent()).isEqualTo(120);
        assertThat(c.brokerUsPerEvent()).isEqualTo(40);
        assertThat(c.totalUsPerEvent()).isEqualTo(260);
        assertThat(c.writersPostgresUsPerCommit()).isEqualTo(400);
        assertThat(c.postgresShareOfWritersPct()).isEqualTo(25);
        assertThat(c.statementsPerEvent()).as("the writers' own statements are not the connector's").isEqualTo(0.7);
        assertThat(c.statementsPerEventByKind()).containsEntry(StatementKinds.CLAIM, 0.5)
            .containsEntry(StatementKinds.STAMP, 0.2).containsEntry(StatementKinds.NESTED, 1.0);
    }

    @Test
    void theNoConnectorStepIsTakenPerSecondSoAWindowOfAnotherLengthCompares() {
        Results.SteadyStep none = steadyStep("none", "", "events", 500, 2_000, 400, 100, 0, Map.of());
        // the same CPU per second over a window twice as long
        Results.SteadyStep longer = new Results.SteadyStep("events", 500, 1, 2, "none", "none", "none", "", 0, 10_000,
            10_000, 500, -1, 0, Results.Cpu.of(new CpuMeter.Sample(800, 4_000, 200, 0, 5_000, 20_000), 10_000),
            StatementCounts.NONE, Map.of());

        Results.SteadyCost c = SteadyAccounting.cost(longer, none);

        assertThat(c.postgresUsPerEvent()).isZero();
        assertThat(c.workerUsPerEvent()).isZero();
        assertThat(c.brokerUsPerEvent()).isZero();
    }

    @Test
    void everyContenderIsCostedAgainstTheNoConnectorStepOfItsOwnWorkloadAndRate() {
        List<Results.SteadyStep> steps = List.of(
            steadyStep("relay", "", "events", 500, 2_500, 400, 100, 0, Map.of()),
            steadyStep("none", "", "events", 500, 2_000, 400, 100, 0, Map.of()),
            steadyStep("none", "", "events", 2000, 9_000, 400, 100, 0, Map.of()),
            steadyStep("relay", "", "events", 2000, 10_000, 400, 100, 0, Map.of()),
            steadyStep("relay", "", "events+10-updates", 2000, 10_000, 400, 100, 0, Map.of()));

        List<Results.SteadyCost> costs = SteadyAccounting.costs(steps);

        assertThat(costs).as("the workload with updates has no no-connector step here").hasSize(2);
        assertThat(costs.get(0).postgresUsPerEvent()).isEqualTo(100);
        assertThat(costs.get(1).rate()).isEqualTo(2000);
        assertThat(costs.get(1).postgresUsPerEvent()).isEqualTo(50);
    }

    @Test
    void theNoConnectorStepSitsBetweenTheFirstContenderAndTheOthersAndEveryOtherGroupIsMirrored() {
        List<String> contenders = List.of("relay", "tuned", "debezium");

        assertThat(SteadyPhase.order("none", contenders, 0)).containsExactly("relay", "none", "tuned", "debezium");
        assertThat(SteadyPhase.order("none", contenders, 1)).containsExactly("debezium", "tuned", "none", "relay");
        assertThat(SteadyPhase.order("none", List.of(), 0)).containsExactly("none");
    }

    /**
     * Two rounds: each contender's steps and the no-connector steps are pooled (CPU and time summed) before the
     * difference, and each round's own total and share are kept for the spread.
     */
    @Test
    void roundsArePooledAndEachRoundIsKept() {
        List<Results.SteadyStep> steps = List.of(
            steadyStep("relay", "", "events", 500, 1, 2_500, 400, 100, 0, Map.of(), Map.of()),
            steadyStep("none", "", "events", 500, 1, 2_000, 400, 100, 0, Map.of(), Map.of()),
            steadyStep("none", "", "events", 500, 2, 2_200, 400, 100, 0, Map.of(), Map.of()),
            steadyStep("relay", "", "events", 500, 2, 2_900, 400, 100, 0, Map.of(), Map.of()));

        List<Results.SteadyCost> costs = SteadyAccounting.costs(steps);

        assertThat(costs).hasSize(1);
        Results.SteadyCost c = costs.get(0);
        assertThat(c.rounds()).isEqualTo(2);
        // round 1: 500 ms over 10 s at 500/s = 100 us; round 2: 700 ms = 140 us; pooled: 1,200 ms over 20 s = 120
        assertThat(c.postgresUsPerEvent()).isEqualTo(120);
        assertThat(c.totalUsPerEventByRound()).containsExactly(100.0, 140.0);
        // the writers' own: 4,200 ms over 20 s at 500/s = 420 us per commit
        assertThat(c.writersPostgresUsPerCommit()).isEqualTo(420);
        assertThat(c.postgresShareOfWritersPctByRound()).containsExactly(25.0, 31.8);
    }

    /** PostgreSQL's CPU by session kind, each over the no-connector step's same kind, per event. */
    @Test
    void postgresCpuBySessionKindIsCostedOverTheWritersAlone() {
        Results.SteadyStep none = steadyStep("none", "", "events", 500, 1, 2_000, 400, 100, 0, Map.of(),
            Map.of(PostgresSessions.WRITERS, 1_900L, PostgresSessions.AUTOVACUUM, 100L));
        Results.SteadyStep relay = steadyStep("relay", "", "events", 500, 1, 2_600, 400, 100, 0, Map.of(),
            Map.of(PostgresSessions.WRITERS, 2_000L, PostgresSessions.RELAY, 400L, PostgresSessions.RELAY_LISTEN, 50L,
                PostgresSessions.AUTOVACUUM, 150L));

        Results.SteadyCost c = SteadyAccounting.cost(relay, none);

        assertThat(c.postgresUsPerEventByKind()).containsEntry(PostgresSessions.RELAY, 80.0)
            .containsEntry(PostgresSessions.RELAY_LISTEN, 10.0).containsEntry(PostgresSessions.WRITERS, 20.0)
            .containsEntry(PostgresSessions.AUTOVACUUM, 10.0).containsEntry(PostgresSessions.DEBEZIUM, 0.0);
        assertThat(c.postgresUsPerEventByKind().values().stream().mapToDouble(Double::doubleValue).sum())
            .as("the kinds add up to the whole").isEqualTo(c.postgresUsPerEvent());
    }
}
