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
}
