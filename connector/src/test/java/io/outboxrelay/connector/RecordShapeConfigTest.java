package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** value.format, headers.format and cloudevents.source: defaults, and the settings that are refused. */
class RecordShapeConfigTest {
    private static OutboxSourceConnectorConfig config(String... kv) {
        return TestConfigs.minimal(kv);
    }

    @Test
    void anExistingConfigKeepsTheEnvelopeWithPlainHeaders() {
        assertThat(config().recordShape()).isEqualTo(RecordShape.ENVELOPE);
    }

    @Test
    void cloudEventsNeedASourceThatIsAUriReference() {
        assertThatThrownBy(() -> config("headers.format", "cloudevents"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("cloudevents.source");
        assertThatThrownBy(() -> config("headers.format", "cloudevents", "cloudevents.source", "not a uri"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("URI-reference");
        RecordShape shape = config("value.format", "payload.json", "headers.format", "cloudevents",
            "cloudevents.source", "/outbox/orders").recordShape();
        assertThat(shape).isEqualTo(new RecordShape(RecordShape.ValueFormat.PAYLOAD_JSON, true, "/outbox/orders"));
    }

    @Test
    void anUnknownFormatIsRefusedWithTheChoices() {
        assertThatThrownBy(() -> config("value.format", "debezium"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("envelope, payload, payload.bytes, payload.json");
        assertThatThrownBy(() -> config("headers.format", "structured"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("plain, cloudevents");
    }
}
