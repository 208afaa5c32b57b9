package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each record shape on a real worker, read back as bytes by a plain consumer: the envelope as before; the
 * payload through StringConverter and ByteArrayConverter as exactly the text the claim read
 * ({@code payload::text}); payload.json through schemaless JsonConverter as a JSON object; CloudEvents
 * binary-mode headers. One outbox database and connector per shape.
 */
class RecordShapesIT {
    private static final String PAYLOAD = "{\"name\": \"Zoë \\\"ACME\\\" 東京\", \"n\": 12.50, \"tags\": [\"a\", null]}";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> CONNECTORS = new ArrayList<>();
    private static final Map<String, TestDatabase> DBS = new HashMap<>();

    @BeforeAll
    static void start() {
        relay("envelope", Map.of());
        relay("payload", Map.of("value.format", "payload",
            "value.converter", "org.apache.kafka.connect.storage.StringConverter"));
        relay("bytes", Map.of("value.format", "payload.bytes",
            "value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"));
        relay("json", Map.of("value.format", "payload.json")); // relayConfig's JsonConverter, schemas off
        relay("ce", Map.of("value.format", "payload", "headers.format", "cloudevents",
            "cloudevents.source", "/outbox/orders",
            "value.converter", "org.apache.kafka.connect.storage.StringConverter"));
    }

    private static void relay(String shape, Map<String, String> settings) {
        TestDatabase db = TestPostgres.get().createDatabase("shape_" + shape);
        DBS.put(shape, db);
        Map<String, String> cfg = TestConnect.relayConfig(db, "hooks", 1);
        cfg.put("subscription.hooks.topic", "shape-" + shape);
        cfg.putAll(settings);
        String name = "shape-" + shape;
        TestConnect.cluster().configureConnector(name, cfg);
        CONNECTORS.add(name);
    }

    @AfterAll
    static void stop() {
        CONNECTORS.forEach(TestConnect.cluster()::deleteConnector);
    }

    /** Writes the event and returns the one record the shape's connector produced for it. */
    private static ConsumerRecord<byte[], byte[]> relayed(String shape) {
        TestDatabase db = DBS.get(shape);
        db.insertEvent("order.placed", "order:7", PAYLOAD);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0);
        List<ConsumerRecord<byte[], byte[]>> records = TestConnect.consumeRaw(1, Duration.ofSeconds(30),
            "shape-" + shape);
        assertThat(records).hasSize(1);
        return records.get(0);
    }

    private static String committedText(String shape) {
        return (String) DBS.get(shape).query("SELECT payload::text FROM events").get(0).get(0);
    }

    private static Map<String, String> headers(ConsumerRecord<byte[], byte[]> r) {
        Map<String, String> out = new HashMap<>();
        for (Header h : r.headers()) {
            out.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }

    /** The metadata headers of every payload format, checked against the row. */
    private static void assertMetadataHeaders(String shape, Map<String, String> headers) {
        List<Object> row = DBS.get(shape).query(
            "SELECT id::text, seq, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS') FROM events")
            .get(0);
        assertThat(headers).containsEntry("event.id", (String) row.get(0))
            .containsEntry("event.type", "order.placed")
            .containsEntry("subscription", "hooks")
            .containsEntry("event.seq", row.get(1).toString())
            .containsEntry("event.subject", "order:7");
        assertThat(Instant.parse(headers.get("event.occurred_at")))
            .isEqualTo(Instant.parse(row.get(2) + "Z"));
    }

    @Test
    void envelopeIsTodaysRecord() throws Exception {
        ConsumerRecord<byte[], byte[]> r = relayed("envelope");
        JsonNode value = JSON.readTree(r.value());
        assertThat(value.get("payload").isTextual()).isTrue();
        assertThat(value.get("payload").asText()).isEqualTo(committedText("envelope"));
        assertThat(value.get("subject").asText()).isEqualTo("order:7");
        assertThat(headers(r)).containsOnlyKeys("event.id", "event.type", "subscription");
    }

    @Test
    void payloadWithStringConverterIsTheCommittedTextExactly() {
        ConsumerRecord<byte[], byte[]> r = relayed("payload");
        // jsonb normalizes the writer's text (key order, spacing): payload::text is what was committed
        assertThat(r.value()).isEqualTo(committedText("payload").getBytes(StandardCharsets.UTF_8));
        assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("order:7");
        assertMetadataHeaders("payload", headers(r));
    }

    @Test
    void payloadBytesWithByteArrayConverterIsTheCommittedTextExactly() {
        ConsumerRecord<byte[], byte[]> r = relayed("bytes");
        assertThat(r.value()).isEqualTo(committedText("bytes").getBytes(StandardCharsets.UTF_8));
        assertMetadataHeaders("bytes", headers(r));
    }

    @Test
    void payloadJsonWithSchemalessJsonConverterIsAJsonObject() throws Exception {
        ConsumerRecord<byte[], byte[]> r = relayed("json");
        JsonNode value = JSON.readTree(r.value());
        assertThat(value.isObject()).as("an object, not an escaped string: %s", value).isTrue();
        assertThat(value.get("name").asText()).isEqualTo("Zoë \"ACME\" 東京");
        assertThat(value.get("n").asDouble()).isEqualTo(12.5);
        assertThat(value.get("tags").toString()).isEqualTo("[\"a\",null]");
        assertMetadataHeaders("json", headers(r));
    }

    @Test
    void cloudEventsBinaryModeHeaders() {
        ConsumerRecord<byte[], byte[]> r = relayed("ce");
        assertThat(r.value()).isEqualTo(committedText("ce").getBytes(StandardCharsets.UTF_8));
        Map<String, String> headers = headers(r);
        assertMetadataHeaders("ce", headers);
        assertThat(headers).containsEntry("ce_specversion", "1.0")
            .containsEntry("ce_id", headers.get("event.id"))
            .containsEntry("ce_type", "order.placed")
            .containsEntry("ce_source", "/outbox/orders")
            .containsEntry("ce_time", headers.get("event.occurred_at"))
            .containsEntry("ce_subject", "order:7")
            .containsEntry("content-type", "application/json");
    }
}
