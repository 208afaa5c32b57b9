package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.junit.jupiter.api.Test;

/**
 * What the connector answers Connect about exactly-once (docs/exactly-once.md, 3.10): SUPPORTED whenever
 * {@code errors.tolerance=none}, whatever the transaction boundary; UNSUPPORTED under {@code errors.tolerance=all}
 * with the reason on that key (never on {@code exactly.once.support}, whose message is Connect's); and which
 * offset changes it lets an operator make.
 */
class ExactlyOnceRulesTest {
    private final OutboxSourceConnector connector = new OutboxSourceConnector();

    private static Map<String, String> config(String... keyValues) {
        Map<String, String> m = new HashMap<>(Map.of("subscriptions", "orders", "connection.url",
            "jdbc:postgresql://localhost/x"));
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    @Test
    void everyBoundaryIsSupportedUnderErrorsToleranceNoneTheDefault() {
        for (Map<String, String> props : List.of(config(), config("errors.tolerance", "none"),
            config("transaction.boundary", "poll"), config("transaction.boundary", "interval"),
            config("transaction.boundary", "connector"))) {
            assertThat(connector.exactlyOnceSupport(props)).as(props.toString()).isEqualTo(ExactlyOnceSupport.SUPPORTED);
            assertThat(connector.canDefineTransactionBoundaries(props)).isEqualTo(ConnectorTransactionBoundaries.SUPPORTED);
        }
    }

    @Test
    void errorsToleranceAllIsUnsupported() {
        for (String all : List.of("all", " ALL ")) {
            Map<String, String> props = config("errors.tolerance", all);
            assertThat(connector.exactlyOnceSupport(props)).isEqualTo(ExactlyOnceSupport.UNSUPPORTED);
            assertThat(connector.canDefineTransactionBoundaries(props)).isEqualTo(ConnectorTransactionBoundaries.UNSUPPORTED);
        }
    }

    @Test
    void theReasonGoesOnErrorsToleranceKeepingItsValueAndNeverOnConnectsOwnKeys() {
        for (Map<String, String> props : List.of(config("errors.tolerance", "all", "exactly.once.support", "required"),
            config("errors.tolerance", "all", "transaction.boundary", "connector"))) {
            Config result = new Config(new ArrayList<>());
            ExactlyOnceRules.check(props, result);
            assertThat(result.configValues()).singleElement().satisfies(v -> {
                assertThat(v.name()).isEqualTo("errors.tolerance");
                assertThat(v.value()).isEqualTo("all");
                assertThat(v.errorMessages()).singleElement().asString()
                    .contains("errors.tolerance=none").contains("exactly-once");
            });
        }
    }

    @Test
    void nothingIsAddedWhenExactlyOnceIsNotAskedForOrTheConfigurationServesIt() {
        for (Map<String, String> props : List.of(config("errors.tolerance", "all"),
            config("errors.tolerance", "all", "exactly.once.support", "requested"),
            config("exactly.once.support", "required"), config("transaction.boundary", "connector"))) {
            Config result = new Config(new ArrayList<>());
            ExactlyOnceRules.check(props, result);
            assertThat(result.configValues()).as(props.toString()).isEmpty();
        }
        Config existing = new Config(new ArrayList<>(List.of(new ConfigValue("outbox.table"))));
        ExactlyOnceRules.check(config("exactly.once.support", "required"), existing);
        assertThat(existing.configValues()).singleElement().satisfies(v -> assertThat(v.errorMessages()).isEmpty());
    }

    @Test
    void anOperatorMayResetTheSlotsButNotWriteThem() {
        Map<Map<String, ?>, Map<String, ?>> reset = new HashMap<>();
        reset.put(Map.of("outbox.slot", "events#0"), null);
        reset.put(Map.of("outbox", "events"), Map.of("seq", 5L));
        reset.put(Map.of("mentions", "messages"), null);
        assertThat(connector.alterOffsets(config(), reset)).isTrue();

        Map<Map<String, ?>, Map<String, ?>> written = new HashMap<>();
        written.put(Map.of("outbox.slot", "events#0"), Map.of("v", 1, "owner", "x", "tasks", 1, "pending", "1"));
        assertThatThrownBy(() -> connector.alterOffsets(config(), written)).isInstanceOf(ConnectException.class)
            .hasMessageContaining("outbox.slot").hasMessageContaining("never delivered");

        Map<Map<String, ?>, Map<String, ?>> mentions = new HashMap<>();
        mentions.put(Map.of("mentions", "messages"), Map.of("v", 1, "pending", "[[1,\"m\"]]"));
        assertThatThrownBy(() -> connector.alterOffsets(config(), mentions)).isInstanceOf(ConnectException.class);
    }
}
