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
        Results.SteadyStep longer = new Results.SteadyStep("events", 500, 2, "none", "none", "none", "", 0, 10_000,
            10_000, 500, -1, 0, Results.Cpu.of(new CpuMeter.Sample(800, 4_000, 200, 0, 5_000, 20_000), 10_000),
            StatementCounts.NONE);

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
}
