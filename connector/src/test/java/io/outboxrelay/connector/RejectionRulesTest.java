package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.Backoff;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The rejection rules applied to a claimed row before any of its records is produced, as pure logic. */
class RejectionRulesTest {
    private static final OutboxSourceConnectorConfig CONFIG = new OutboxSourceConnectorConfig(Map.of(
        "connection.url", "jdbc:postgresql://localhost/app", "subscriptions", "webhooks"));

    private static final RejectionRules RULES = new RejectionRules(CONFIG, new Backoff(1, 2));

    private static ClaimedRow rowWithHeader(String key) {
        return new ClaimedRow(12, "id-12", "order.created", "order:1", "{}", 0L, 1, null, 2, "object",
            new String[] {"traceparent", key}, new String[] {"00-ab-01", "forged"}, false);
    }

    @ParameterizedTest
    @ValueSource(strings = {"event.id", "event.type", "subscription"})
    void aRowWhoseHeadersSetAHeaderTheRelayWritesIsRejectedWithTheFix(String reserved) {
        assertThat(RULES.beforeProducing(rowWithHeader(reserved)))
            .contains("'" + reserved + "'").contains("SELECT events_requeue(12)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"event.source", "Event.ID", "x-subscription"})
    void otherHeaderNamesPass(String key) {
        assertThat(RULES.beforeProducing(rowWithHeader(key))).isNull();
    }

    @Test
    void aPayloadNestedTooDeeplyForPayloadJsonIsRejectedNotLeftToFailTheTask() {
        RejectionRules rules = new RejectionRules(new OutboxSourceConnectorConfig(Map.of(
            "connection.url", "jdbc:postgresql://localhost/app", "subscriptions", "webhooks",
            "value.format", "payload.json")), new Backoff(1, 2));
        String deep = "[".repeat(600) + "\"]]\"" + "]".repeat(600);
        ClaimedRow row = new ClaimedRow(13, "id-13", "order.created", "order:1", deep, 0L, 1, null, deep.length(),
            null, null, null, false);
        assertThat(RejectionRules.nestingDepth(deep)).isEqualTo(600);
        assertThat(rules.beforeProducing(row)).contains("deeper than 500").contains("events_requeue(13)");
        assertThat(RULES.beforeProducing(row)).as("the envelope carries the payload as text: no limit").isNull();
    }
}
