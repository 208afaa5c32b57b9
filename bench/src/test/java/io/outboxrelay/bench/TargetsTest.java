package io.outboxrelay.bench;

import static io.outboxrelay.bench.Fixtures.drain;
import static io.outboxrelay.bench.Fixtures.steadyCost;
import static io.outboxrelay.bench.Fixtures.sustainable;
import static io.outboxrelay.bench.Fixtures.writerRun;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TargetsTest {

    private static Results.Target target(Results r, String name) {
        return r.targets.stream().filter(t -> t.name().equals(name)).findFirst()
            .orElseThrow(() -> new AssertionError("no target '" + name + "' in " + r.targets.stream()
                .map(Results.Target::name).toList()));
    }

    /** Issue 25, item 4: what exactly-once costs, beside the default relay, as information and never judged. */
    @Test
    void theExactlyOnceContenderIsReportedAsTheCostOfExactlyOnceAndJudgedNowhere() {
        Results r = new Results();
        r.drains.add(drain("relay", "", 1, 10_000, 8_000, 50, 40));
        r.drains.add(drain("relay", ExactlyOnce.VARIANT, 1, 10_000, 6_000, 50, 40));
        r.drains.add(drain("relay", "", 2, 10_000, 12_000, 50, 40));
        r.drains.add(drain("relay", ExactlyOnce.VARIANT, 2, 10_000, 9_600, 50, 40));
        r.latency.add(Fixtures.latency("relay", "", 1000, 999, 15_000, 15_000, 9));
        r.latency.add(Fixtures.latency("relay", ExactlyOnce.VARIANT, 1000, 999, 15_000, 15_000, 30));

        Targets.evaluate(r);

        Results.Target drain1 = target(r, "exactly-once cost: drain, 1 task (info)");
        assertThat(drain1.met()).isNull();
        assertThat(drain1.measured()).isEqualTo("0.75x the default relay (6,000 vs 8,000 events/s)");
        assertThat(target(r, "exactly-once cost: drain, 2 tasks (info)").measured()).startsWith("0.80x");
        Results.Target latency = target(r, "exactly-once cost: latency at 1,000/s (info)");
        assertThat(latency.met()).isNull();
        assertThat(latency.measured()).isEqualTo("p99 30.0 ms vs 9.0 ms, p50 10.0 vs 3.0 ms (read_committed consumer)");
        assertThat(r.targets).extracting(Results.Target::name).noneMatch(n -> n.startsWith("latency (variant"));
    }

    @Test
    void theSustainableRateIsJudgedAgainstDefaultAndTunedDebeziumAndAHeldNothingDebeziumCountsAsItsLowestStep() {
        Results r = new Results();
        r.sustainable.add(sustainable("relay", "", 5, 6, 8, 10, 20, 400, 500)); // holds up to 5,000/s
        r.sustainable.add(sustainable("debezium", "", 800, 810)); // holds nothing: compared at 500/s
        r.sustainable.add(sustainable("debezium", DebeziumContender.TUNED_VARIANT, 30, 40, 60, 120, 200, 900));

        Targets.evaluate(r);

        Results.Target vsDefault = target(r, "sustainable rate vs Debezium");
        assertThat(vsDefault.met()).isTrue();
        assertThat(vsDefault.measured()).isEqualTo("10.00x (5,000/s vs none held (below 500/s))");
        Results.Target vsTuned = target(r, "sustainable rate vs Debezium tuned");
        assertThat(vsTuned.met()).as("both hold 5,000/s").isFalse();
        assertThat(vsTuned.measured()).isEqualTo("1.00x (5,000/s vs 5,000/s)");
        assertThat(target(r, "sustainable: p99 at every step up to the rate").met()).isTrue();
    }

    @Test
    void exactlyOneAndAHalfTimesTunedDebeziumMeetsTheTargetAndLessDoesNot() {
        Results r = new Results();
        r.sustainable.add(sustainable("relay", "", 5, 6, 8, 10, 400, 500)); // 3,000/s
        r.sustainable.add(sustainable("debezium", DebeziumContender.TUNED_VARIANT, 30, 40, 60, 900)); // 2,000/s
        Targets.evaluate(r);
        assertThat(target(r, "sustainable rate vs Debezium tuned").met()).isTrue();

        Results worse = new Results();
        worse.sustainable.add(sustainable("relay", "", 5, 6, 8, 400, 500)); // 2,000/s
        worse.sustainable.add(sustainable("debezium", DebeziumContender.TUNED_VARIANT, 30, 40, 60, 900));
        Targets.evaluate(worse);
        assertThat(target(worse, "sustainable rate vs Debezium tuned").met()).isFalse();
    }

    @Test
    void aTailFailureBelowTheSustainableRateFailsTheTailTarget() {
        Results r = new Results();
        r.sustainable.add(sustainable("relay", "", 5, 300, 8, 10, 400, 500)); // 1,000/s failed, 3,000/s held

        Targets.evaluate(r);

        Results.Target tail = target(r, "sustainable: p99 at every step up to the rate");
        assertThat(tail.met()).isFalse();
        assertThat(tail.measured()).isEqualTo("worst p99 300.0 ms (at 1,000/s); steps 500-3,000/s");
    }

    @Test
    void aRelayVariantIsJudgedUnderItsOwnName() {
        Results r = new Results();
        r.relayVariants.put("txn", Map.of("outbox.claim.mode", "transaction"));
        r.sustainable.add(sustainable("relay", "", 5, 6, 400, 500));
        r.sustainable.add(sustainable("relay", "txn", 5, 6, 8, 10, 20, 400, 500));
        r.sustainable.add(sustainable("debezium", "", 30, 40, 600, 900));
        r.drains.add(drain("relay", "", 2, 200_000, 20_000, 200, 30));
        r.drains.add(drain("relay", "txn", 2, 200_000, 40_000, 200, 30));
        r.drains.add(drain("debezium", "", 1, 200_000, 25_000, 300, 30));

        Targets.evaluate(r);

        assertThat(target(r, "sustainable rate vs Debezium").met()).isFalse();
        assertThat(target(r, "sustainable rate vs Debezium (variant txn)").met()).isTrue();
        assertThat(target(r, "drain vs Debezium").met()).as("the variant's faster drain is not the default's")
            .isFalse();
        assertThat(target(r, "drain vs Debezium (variant txn)").met()).isTrue();
    }

    @Test
    void firstRecordAtTheLargestBacklogIsJudgedAgainst300Ms() {
        Results r = new Results();
        r.scale.add(drain("relay", "", 1, 20_000, 25_000, 90, 25));
        r.scale.add(drain("relay", "", 1, 1_000_000, 22_000, 300, 27));
        Targets.evaluate(r);
        Results.Target first = target(r, "first record at the largest backlog");
        assertThat(first.met()).isTrue();
        assertThat(first.measured()).isEqualTo("300 ms at 1,000,000 events (90 ms at 20,000)");

        Results slow = new Results();
        slow.scale.add(drain("relay", "", 1, 20_000, 25_000, 90, 25));
        slow.scale.add(drain("relay", "", 1, 1_000_000, 22_000, 301, 27));
        Targets.evaluate(slow);
        assertThat(target(slow, "first record at the largest backlog").met()).isFalse();
    }

    @Test
    void theWritersWithTheRelayRunningAreJudgedAt1point5xDebeziumAtEachConnectionCount() {
        Results r = new Results();
        for (int round = 1; round <= 2; round++) {
            r.writers.add(writerRun("relay-shipped", "relay", 4, round, 7_500));
            r.writers.add(writerRun("debezium", "debezium", 4, round, 5_000));
            r.writers.add(writerRun("relay-shipped", "relay", 16, round, round == 1 ? 8_000 : 9_000));
            r.writers.add(writerRun("debezium", "debezium", 16, round, 6_000));
        }
        r.writerCases.addAll(WritersPhase.summarize(r.writers));

        Targets.evaluate(r);

        Results.Target at4 = target(r, "writers: relay vs Debezium (4 connections)");
        assertThat(at4.met()).isTrue();
        assertThat(at4.measured()).startsWith("1.50x");
        Results.Target at16 = target(r, "writers: relay vs Debezium (16 connections)");
        assertThat(at16.met()).as("mean of 1.33x and 1.50x").isFalse();
    }

    @Test
    void theSchemaWithoutConnectorIsStillJudgedAgainstTheTableWithoutTrigger() {
        Results r = new Results();
        r.writers.add(writerRun("shipped", "none", 4, 1, 890));
        r.writers.add(writerRun("no-trigger", "none", 4, 1, 1000));
        r.writerCases.addAll(WritersPhase.summarize(r.writers));

        Targets.evaluate(r);

        assertThat(target(r, "writers: schema vs no trigger (4 connections)").met()).isFalse();
    }

    @Test
    void atASteadyRateTheRelaysTotalCpuIsJudgedAgainstTheTunedDebeziumsAndItsPostgresCpuAgainstTheWriters() {
        Results r = new Results();
        String tuned = DebeziumContender.TUNED_VARIANT;
        r.steadyCosts.add(steadyCost("relay", "", "events", 500, 100, 120, 40, 0)); // total 260, Postgres 25 %
        r.steadyCosts.add(steadyCost("debezium", tuned, "events", 500, 20, 200, 40, 0)); // total 260
        r.steadyCosts.add(steadyCost("relay", "", "events", 2000, 104, 100, 40, 0)); // total 244, Postgres 26 %
        r.steadyCosts.add(steadyCost("debezium", tuned, "events", 2000, 10, 150, 80, 0)); // total 240
        r.steadyCosts.add(steadyCost("relay", "", "events", 1000, 500, 500, 500, 0)); // not a judged rate

        Targets.evaluate(r);

        Results.Target total500 = target(r, "steady: CPU per event vs Debezium tuned at 500/s");
        assertThat(total500.met()).as("equal is at most").isTrue();
        assertThat(total500.measured())
            .isEqualTo("260 vs 260 us (Postgres 100 + worker 120 + broker 40 vs 20 + 200 + 40); other load 0.00 cores");
        assertThat(target(r, "steady: PostgreSQL CPU vs the writers' own at 500/s").met()).isTrue();
        assertThat(target(r, "steady: PostgreSQL CPU vs the writers' own at 500/s").measured())
            .isEqualTo("25% (100 us per event vs 400 us per commit); other load 0.00 cores");
        assertThat(target(r, "steady: CPU per event vs Debezium tuned at 2,000/s").met()).isFalse();
        assertThat(target(r, "steady: PostgreSQL CPU vs the writers' own at 2,000/s").met()).isFalse();
        assertThat(r.targets).noneMatch(t -> t.name().contains("1,000/s"));
    }

    @Test
    void aSteadyRelayThatLostEventsMeetsNoTargetAndTheWorkloadWithUpdatesIsOnlyShown() {
        Results r = new Results();
        String tuned = DebeziumContender.TUNED_VARIANT;
        r.steadyCosts.add(steadyCost("relay", "", "events", 500, 10, 10, 10, 3));
        r.steadyCosts.add(steadyCost("debezium", tuned, "events", 500, 100, 100, 100, 0));
        r.steadyCosts.add(steadyCost("relay", "", "events+10-updates", 500, 10, 10, 10, 0));
        r.steadyCosts.add(steadyCost("debezium", tuned, "events+10-updates", 500, 100, 100, 100, 0));

        Targets.evaluate(r);

        Results.Target lost = target(r, "steady: CPU per event vs Debezium tuned at 500/s");
        assertThat(lost.met()).isFalse();
        assertThat(lost.measured()).endsWith("; 3 events not delivered; other load 0.00 cores");
        assertThat(target(r, "steady: PostgreSQL CPU vs the writers' own at 500/s").met()).isFalse();
        assertThat(target(r, "steady: CPU per event vs Debezium tuned at 500/s (events+10-updates, info)").met())
            .isNull();
    }
}
