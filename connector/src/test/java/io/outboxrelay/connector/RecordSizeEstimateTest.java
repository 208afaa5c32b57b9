package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
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
            1_000L, 1, null, Json.utf8Length(payload), headerKeys == null ? null : "object", headerKeys,
            headerValues, false);
    }

    /** Bytes of key, value and headers as the worker's converters write them, schemas on (the larger form). */
    private static int convertedBytes(ClaimedRow row) {
        return convertedBytes(row, RecordShape.ENVELOPE, jsonConverter());
    }

    private static Converter jsonConverter() {
        JsonConverter value = new JsonConverter();
        value.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        return value;
    }

    /** The same with {@code value} as the value converter, for a record of {@code shape}. */
    private static int convertedBytes(ClaimedRow row, RecordShape shape, Converter value) {
        OutboxRecordFactory factory = new OutboxRecordFactory(List.of(HOOKS), "events", shape);
        List<SourceRecord> out = new ArrayList<>();
        factory.records(List.of(factory.pending(row)), out);
        SourceRecord record = out.get(0);
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

    static Stream<String> payloadKinds() {
        return Stream.of("{}", "{\"name\": \"ACME\"}", "QUOTES", "BACKSLASHES", "CONTROL", "PLAIN", "NUMBERS",
            "{\"name\": \"Zoë 東京 🚀\"}");
    }

    /** A payload of the kind: the kind itself, or a large one heavy in what converters write differently. */
    private static String payload(String kind) {
        return switch (kind) {
            case "QUOTES" -> "{\"q\": [" + "\"\", ".repeat(20_000) + "\"\"]}";
            case "BACKSLASHES" -> "{\"p\": \"" + "\\\\".repeat(20_000) + "\"}";
            case "CONTROL" -> "{\"t\": \"" + "\\u0001\\n".repeat(5_000) + "\"}";
            case "PLAIN" -> "{\"p\": \"" + "x".repeat(60_000) + "\"}";
            case "NUMBERS" -> "[" + "0.0000001, 123456789012345678901234, -1, ".repeat(2_000) + "0]";
            default -> kind;
        };
    }

    @ParameterizedTest
    @MethodSource("payloadKinds")
    void theEstimateCoversWhatJsonConverterWrites(String kind) {
        String payload = payload(kind);
        ClaimedRow row = row(payload, new String[] {"traceparent"}, new String[] {"00-\"quoted\"-01"});
        assertThat(row.estimatedRecordBytes(RecordShape.ENVELOPE)).as(kind).isGreaterThanOrEqualTo(convertedBytes(row));
    }

    /**
     * Every record shape with every converter it is meant for, and JsonConverter (schemas on) with all of
     * them: payload.bytes becomes base64, longer than the text when it has few quotes; cloudevents repeats
     * subject, type and id in ce_ headers and adds the configured source.
     */
    @ParameterizedTest
    @MethodSource("payloadKinds")
    void theEstimateCoversEveryRecordShapeAndConverter(String kind) {
        String payload = payload(kind);
        String subject = "supplier:" + "s".repeat(3_000);
        ClaimedRow row = new ClaimedRow(7, "0b7a3c52-6f6c-4d2e-9a51-3f1f0d8e2a11", "supplier.connected", subject,
            payload, 1_000L, 1, null, Json.utf8Length(payload), "object", new String[] {"traceparent"},
            new String[] {"00-\"quoted\"-01"}, false);
        String source = "https://orders.example.com/" + "outbox/".repeat(300);
        for (RecordShape.ValueFormat format : RecordShape.ValueFormat.values()) {
            for (boolean ce : List.of(false, true)) {
                RecordShape shape = new RecordShape(format, ce, ce ? source : "");
                List<Converter> converters = new ArrayList<>(List.of(jsonConverter()));
                switch (format) {
                    case PAYLOAD -> converters.add(new StringConverter());
                    case PAYLOAD_BYTES -> converters.add(new ByteArrayConverter());
                    case PAYLOAD_JSON -> {
                        JsonConverter schemaless = new JsonConverter();
                        schemaless.configure(Map.of("schemas.enable", "false", "converter.type", "value"));
                        converters.add(schemaless);
                    }
                    default -> { }
                }
                for (Converter c : converters) {
                    assertThat(row.estimatedRecordBytes(shape)).as("%s %s ce=%s %s", kind, format, ce,
                        c.getClass().getSimpleName()).isGreaterThanOrEqualTo(convertedBytes(row, shape, c));
                }
            }
        }
    }

    /** An adopted table's id is any text: a long one of quotes or of two-byte characters counts as written. */
    @ParameterizedTest
    @ValueSource(strings = {"quotes", "two-byte"})
    void theEstimateCoversALongIdAsJsonConverterEscapesAndEncodesIt(String kind) {
        String id = kind.equals("quotes") ? "\"".repeat(45_000) : "é".repeat(30_000);
        ClaimedRow row = new ClaimedRow(7, id, "supplier.connected", "supplier:42", "{}", 1_000L, 1, null, 2, null,
            null, null, false);
        assertThat(row.estimatedRecordBytes(RecordShape.ENVELOPE)).isGreaterThanOrEqualTo(convertedBytes(row));
    }

    @Test
    void aQuoteHeavyPayloadUnderTheLimitRawIsOverItAsARecord() {
        // ~900 KB of JSON, more than a third of it quotes: under the 1,000,000-byte default when counted
        // raw, well over it once JsonConverter has escaped every quote
        String payload = "{\"q\": [" + "\"\", ".repeat(225_000) + "\"\"]}";
        ClaimedRow row = row(payload, null, null);
        assertThat(row.payloadBytes()).isLessThan(OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES);
        assertThat(convertedBytes(row)).isGreaterThan(OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES);
        assertThat(row.estimatedRecordBytes(RecordShape.ENVELOPE)).isGreaterThan(OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES);
    }
}
