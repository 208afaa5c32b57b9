package io.outboxrelay.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {

    @Test
    void aRelayVariantTakesANameAndConnectorSettings() {
        BenchOptions o = BenchOptions.parse(new String[] {
            "--relay-variant=txn=outbox.claim.mode=transaction,outbox.batch.size=500",
            "--relay-variant=big=outbox.batch.size=1000"});

        assertThat(o.relayVariants()).extracting(RelayVariant::name).containsExactly("txn", "big");
        assertThat(o.relayVariants().get(0).config())
            .isEqualTo(Map.of("outbox.claim.mode", "transaction", "outbox.batch.size", "500"));
        assertThat(o.relayVariants().get(0).label(2)).isEqualTo("relay 2 tasks, 1 sub, variant txn");
        assertThat(o.phases()).contains("sustainable");
    }

    @Test
    void aRelayVariantMayRunItsOwnNumberOfTasksButRelayConfigMayNot() {
        BenchOptions o = BenchOptions.parse(new String[] {"--relay-variant=t8=tasks.max=8", "--relay-variant=d=a=1"});

        assertThat(o.relayVariants().get(0).tasks(2)).isEqualTo(8);
        assertThat(o.relayVariants().get(0).label(2)).isEqualTo("relay 8 tasks, 1 sub, variant t8");
        assertThat(o.relayVariants().get(1).tasks(2)).isEqualTo(2);
        assertThat(TableSetup.relay(o.relayVariants().get(0)).label()).startsWith("relay 8 tasks, variant t8");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--relay-variant=t=tasks.max=0"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tasks.max=0");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--relay-config=tasks.max=4"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot set tasks.max");
    }

    @Test
    void aRelayVariantWithoutSettingsOrWithABadNameIsRefused() {
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--relay-variant=txn"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NAME=key=value");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--relay-variant=txn=outbox.claim.mode"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key=value pairs");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--relay-variant=a b=outbox.batch.size=5"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("letters, digits");
    }

    @Test
    void aNameUsedTwiceOrABuiltInWakeupsNameIsRefused() {
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--relay-variant=x=a=1", "--relay-variant=x=b=2"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'x' is used twice");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--relay-variant=polling=a=1"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'polling'");
    }

    @Test
    void theSustainableRatesCanBeChosenAndMustRise() {
        assertThat(BenchOptions.parse(new String[] {"--sustainable-rates=1000,4000"}).sustainable().rates())
            .isEqualTo(List.of(1000, 4000));
        assertThat(BenchOptions.parse(new String[0]).sustainable().rates())
            .isEqualTo(BenchOptions.SUSTAINABLE_RATES);
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--sustainable-rates=2000,1000"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must rise");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--sustainable-rates=1k"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'1k'");
    }

    @Test
    void fullAndQuickStepsAreStatedAndTheSameConnectionsServeEveryContender() {
        BenchOptions.SustainableOptions full = BenchOptions.parse(new String[0]).sustainable();
        BenchOptions.SustainableOptions quick = BenchOptions.parse(new String[] {"--quick"}).sustainable();

        assertThat(full.warmupSeconds() + full.seconds()).isEqualTo(18);
        assertThat(quick.warmupSeconds() + quick.seconds()).isEqualTo(5);
        assertThat(full.connections()).isEqualTo(quick.connections()).isEqualTo(16);
    }

    @Test
    void theSteadyPhaseRunsTheIssuesRatesForTwentySecondsAndQuickModeTheTwoJudgedOnesShorter() {
        BenchOptions.SteadyOptions full = BenchOptions.parse(new String[0]).steady();
        BenchOptions.SteadyOptions quick = BenchOptions.parse(new String[] {"--quick"}).steady();

        assertThat(full.rates()).isEqualTo(List.of(500, 1000, 2000));
        assertThat(full.seconds()).isEqualTo(20);
        assertThat(quick.rates()).isEqualTo(List.of(500, 2000));
        assertThat(quick.seconds()).isLessThan(full.seconds());
        assertThat(full.connections()).isEqualTo(16);
        assertThat(full.updatedRows()).isEqualTo(10);
        assertThat(full.hotSubject()).as("the hot-subject workload only when asked").isFalse();
        assertThat(BenchOptions.parse(new String[] {"--quick", "--steady-hot-subject"}).steady().hotSubject()).isTrue();
        assertThat(BenchOptions.parse(new String[] {"--phases=steady"}).runs("steady")).isTrue();
    }

    @Test
    void theSteadyRatesAndStepLengthCanBeChosen() {
        BenchOptions o = BenchOptions.parse(new String[] {"--quick", "--steady-rates=1000,3000", "--steady-seconds=7"});

        assertThat(o.steady().rates()).isEqualTo(List.of(1000, 3000));
        assertThat(o.steady().seconds()).isEqualTo(7);
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--steady-seconds=0"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--steady-seconds");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--steady-rates=2000,500"}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--steady-rates must rise");
    }
}
