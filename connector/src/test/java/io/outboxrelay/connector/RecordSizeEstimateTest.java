package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code outbox.max.record.bytes} is checked against an estimate made before any converter runs. The
 * estimate must not fall below what a converter writes: JsonConverter writes the payload as an escaped
 * JSON string (a quote becomes two bytes) and, with schemas enabled, the value's schema beside it. A row
 * that passes the check must not then exceed the producer's max.request.size and fail the task.
 */
class RecordSizeEstimateTest {
    private static final Subscription HOOKS = new Subscription("webhooks", "hooks", List.of("*"), false);

    private static ClaimedRow row(String payload, String[] headerKeys, String[] headerValues) {
        return new ClaimedRow(7, "0b7a3c52-6f6c-4d2e-9a51-3f1f0d8e2a11", "supplier.connected", "supplier:42", payload,
            1_000L, 1, null, JdbcOutboxStore.utf8Length(payload), headerKeys == null ? null : "object", headerKeys,
            headerValues, false);
    }

    /** Bytes of key, value and headers as the worker's converters write them, schemas on (the larger form). */
    private static int convertedBytes(ClaimedRow row) {
        OutboxRecordFactory factory = new OutboxRecordFactory(List.of(HOOKS), "events");
        List<SourceRecord> out = new ArrayList<>();
        factory.records(List.of(factory.pending(row)), out);
        SourceRecord record = out.get(0);
        JsonConverter value = new JsonConverter();
        value.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        StringConverter key = new StringConverter();
        key.configure(Map.of(), true);
        SimpleHeaderConverter headers = new SimpleHeaderConverter();
        headers.configure(Map.of());
        int bytes = value.fromConnectData(record.topic(), record.valueSchema(), record.value()).length
            + key.fromConnectData(record.topic(), record.keySchema(), record.key()).length;
        for (Header h : record.headers()) {
            bytes += h.key().getBytes(StandardCharsets.UTF_8).length
                + headers.fromConnectHeader(record.topic(), h.key(), h.schema(), h.value()).length;
        }
        return bytes;
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{}",
        "{\"name\": \"ACME\"}",
        "QUOTES",
        "BACKSLASHES",
        "CONTROL",
        "{\"name\": \"Zoë 東京 🚀\"}"})
    void theEstimateCoversWhatJsonConverterWrites(String kind) {
        String payload = switch (kind) {
            case "QUOTES" -> "{\"q\": [" + "\"\", ".repeat(20_000) + "\"\"]}";
            case "BACKSLASHES" -> "{\"p\": \"" + "\\\\".repeat(20_000) + "\"}";
            case "CONTROL" -> "{\"t\": \"" + "\\u0001\\n".repeat(5_000) + "\"}";
            default -> kind;
        };
        ClaimedRow row = row(payload, new String[] {"traceparent"}, new String[] {"00-\"quoted\"-01"});
        assertThat(row.estimatedRecordBytes()).as(kind).isGreaterThanOrEqualTo(convertedBytes(row));
    }

    @Test
    void aQuoteHeavyPayloadUnderTheLimitRawIsOverItAsARecord() {
        // ~900 KB of JSON, more than a third of it quotes: under the 1,000,000-byte default when counted
        // raw, well over it once JsonConverter has escaped every quote
        String payload = "{\"q\": [" + "\"\", ".repeat(225_000) + "\"\"]}";
        ClaimedRow row = row(payload, null, null);
        assertThat(row.payloadBytes()).isLessThan(OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES);
        assertThat(convertedBytes(row)).isGreaterThan(OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES);
        assertThat(row.estimatedRecordBytes()).isGreaterThan(OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES);
    }
}
