package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.apicurio.registry.serde.avro.NonRecordContainer;
import io.apicurio.registry.utils.converter.avro.AvroData;
import io.outboxrelay.mentions.Arm;
import io.outboxrelay.mentions.ChannelMember;
import io.outboxrelay.mentions.RecoveredMentions;
import io.outboxrelay.mentions.RoutedMention;
import io.outboxrelay.mentions.UnroutedMessage;
import io.outboxrelay.testsupport.ProjectFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.avro.SchemaFormatter;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Avro schemas checked in under {@code schemas/avro/} are a published contract: consumers compile
 * against them and a schema registry compares new versions with them. This keeps each one equal to the
 * Avro form (Apicurio's {@link AvroData}, the mapping Confluent's converter uses too) of the Connect
 * schema the connector emits, and shows that real records survive Avro binary encoding with them.
 * When a Connect schema changes on purpose, paste the schema printed in the failure into the file and
 * decide whether the change is compatible for consumers.
 */
class AvroContractTest {
    private static final Map<String, Schema> CONTRACTS = Map.of(
        "OutboxEvent.avsc", OutboxSchemas.EVENT_VALUE,
        "OutboxKey.avsc", OutboxSchemas.EVENT_KEY,
        "OutboxPoison.avsc", OutboxSchemas.POISON_VALUE,
        "RecoveredMention.avsc", RecoveredMentions.VALUE_SCHEMA,
        "RecoveredMentionKey.avsc", RecoveredMentions.KEY_SCHEMA);

    private final AvroData avroData = new AvroData(16);

    static Stream<String> contractFiles() {
        return CONTRACTS.keySet().stream().sorted();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contractFiles")
    void checkedInSchemaEqualsTheAvroFormOfWhatTheConnectorEmits(String file) throws IOException {
        org.apache.avro.Schema emitted = avroData.fromConnectSchema(CONTRACTS.get(file));
        org.apache.avro.Schema checkedIn = avsc(file);

        String hint = "schemas/avro/" + file + " differs from what the connector emits. If the change is intended,"
            + " replace the file with:\n" + SchemaFormatter.getInstance("json/pretty").format(emitted) + "\n";
        assertThat(checkedIn).as(hint).isEqualTo(emitted);
        // Schema.equals ignores docs; the JSON form does not
        assertThat(checkedIn.toString()).as(hint).isEqualTo(emitted.toString());
    }

    @Test
    void everyCheckedInSchemaIsAContract() throws IOException {
        try (Stream<Path> files = Files.list(avroDir())) {
            List<String> avsc = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".avsc")).toList();
            assertThat(avsc).as("schemas/avro/*.avsc").containsExactlyInAnyOrderElementsOf(CONTRACTS.keySet());
        }
    }

    @Test
    void outboxEventRecordsSurviveAvroEncodingWithTheCheckedInSchemas() throws IOException {
        // as OutboxRecordFactory builds them: a plain record (coalesced_seqs null) and a coalesced one
        Struct plain = event(41, "webhooks", "{\"supplier_id\": 42, \"name\": \"Zoë's Ölmühle\"}", null);
        Struct coalesced = event(42, "corpus.index", "{}", List.of(41L, 42L));
        for (Struct value : List.of(plain, coalesced)) {
            assertSurvives("OutboxEvent.avsc", value);
        }
        assertThat(roundTrip("OutboxKey.avsc", OutboxSchemas.EVENT_KEY, "supplier:42").value()).isEqualTo("supplier:42");
    }

    private static Struct event(long seq, String subscription, String payload, List<Long> coalescedSeqs) {
        return new Struct(OutboxSchemas.EVENT_VALUE)
            .put("id", "7d8e1c1a-0b5e-4b8e-9d0e-7c1f3a2b4c" + seq)
            .put("seq", seq)
            .put("type", "supplier.connected")
            .put("subject", "supplier:42")
            .put("occurred_at", new Date(1_767_225_600_123L + seq))
            .put("subscription", subscription)
            .put("payload", payload)
            .put("coalesced_seqs", coalescedSeqs);
    }

    @Test
    void poisonRecordsSurviveAvroEncodingWithTheCheckedInSchema() throws IOException {
        Struct poison = new Struct(OutboxSchemas.POISON_VALUE)
            .put("id", "7d8e1c1a-0b5e-4b8e-9d0e-7c1f3a2b4c5d").put("seq", 41L).put("type", "supplier.connected")
            .put("subject", "supplier:42").put("attempts", 5).put("reason", "record of about 2000000 bytes")
            .put("occurred_at", new Date(1_767_225_600_123L)).put("poisoned_at", new Date(1_767_225_660_000L))
            .put("table", "app.events");
        assertSurvives("OutboxPoison.avsc", poison);
    }

    @Test
    void recoveredMentionRecordsSurviveAvroEncodingWithTheCheckedInSchemas() throws IOException {
        UnroutedMessage message = new UnroutedMessage("m-17", 17, "u-ada", "c-ops", false,
            "[{\"type\":\"text\",\"text\":\"@scout look\"}]");
        for (Arm arm : Arm.values()) {
            ChannelMember scout = new ChannelMember("a-scout", "scout", true, arm != Arm.OWED, null, arm == Arm.STEER);
            Struct value = RecoveredMentions.value(message, new RoutedMention(scout, arm), 1_767_225_700_000L);
            assertSurvives("RecoveredMention.avsc", value);
            assertThat(roundTrip("RecoveredMentionKey.avsc", RecoveredMentions.KEY_SCHEMA, "a-scout").value())
                .isEqualTo("a-scout");
        }
    }

    /** Struct → AvroData → binary with the .avsc → back → AvroData: every field comes back equal. */
    private void assertSurvives(String file, Struct original) throws IOException {
        org.apache.kafka.connect.data.SchemaAndValue back = roundTrip(file, original.schema(), original);
        Struct decoded = (Struct) back.value();
        for (Field f : original.schema().fields()) {
            assertThat(decoded.get(f.name())).as("%s: field %s", file, f.name()).isEqualTo(original.get(f));
        }
        assertThat(decoded.schema().name()).isEqualTo(original.schema().name());
    }

    private org.apache.kafka.connect.data.SchemaAndValue roundTrip(String file, Schema connectSchema, Object value)
        throws IOException {
        org.apache.avro.Schema schema = avsc(file);
        Object avro = avroData.fromConnectData(connectSchema, value);
        if (avro instanceof GenericContainer container) {
            assertThat(container.getSchema()).isEqualTo(schema);
        }
        if (avro instanceof NonRecordContainer<?> primitive) {
            avro = primitive.getValue(); // how AvroData hands over a key that is a plain string
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
        new GenericDatumWriter<>(schema).write(avro, encoder);
        encoder.flush();
        Object decoded = new GenericDatumReader<>(schema)
            .read(null, DecoderFactory.get().binaryDecoder(bytes.toByteArray(), null));
        return avroData.toConnectData(schema, decoded);
    }

    private static org.apache.avro.Schema avsc(String file) throws IOException {
        return new org.apache.avro.Schema.Parser().parse(avroDir().resolve(file).toFile());
    }

    private static Path avroDir() {
        return ProjectFiles.root().resolve("schemas").resolve("avro");
    }

    /**
     * Which record shapes an Avro converter takes (README, "Record shape"): the envelope (above), and
     * payload / payload.bytes, whose values are a plain Avro string / bytes holding the JSON text. A
     * payload.json value is schemaless: the converter wraps it in its generic catch-all record, not a
     * schema of the payload, so that format is for JsonConverter only.
     */
    @Test
    void payloadAndPayloadBytesAreAvroStringAndBytesPayloadJsonHasNoAvroSchemaOfItsOwn() {
        String json = "{\"name\": \"ACME\"}";
        Map<String, SourceRecordValue> shapes = new java.util.LinkedHashMap<>();
        for (String format : RecordShape.ValueFormat.configNames()) {
            RecordShape shape = new RecordShape(RecordShape.ValueFormat.of(format), false, "");
            OutboxRecordFactory factory = new OutboxRecordFactory(
                List.of(new Subscription("hooks", "hooks", List.of("*"), false)), "events", shape);
            List<org.apache.kafka.connect.source.SourceRecord> out = new java.util.ArrayList<>();
            factory.records(List.of(factory.pending(new ClaimedRow(1, "id-1", "t", "s", json, 1L, 1, null,
                json.length(), null, null, null, false))), out);
            shapes.put(format, new SourceRecordValue(out.get(0).valueSchema(), out.get(0).value()));
        }
        SourceRecordValue payload = shapes.get("payload");
        assertThat(avroData.fromConnectSchema(payload.schema()).toString()).isEqualTo("[\"null\",\"string\"]");
        assertThat(((NonRecordContainer) avroData.fromConnectData(payload.schema(), payload.value())).getValue())
            .isEqualTo(json);
        SourceRecordValue bytes = shapes.get("payload.bytes");
        assertThat(avroData.fromConnectSchema(bytes.schema()).toString()).isEqualTo("[\"null\",\"bytes\"]");
        SourceRecordValue parsed = shapes.get("payload.json");
        assertThat(parsed.schema()).as("schemaless: nothing an Avro converter can register").isNull();
        // the converter falls back to its catch-all record: every value in nullable boolean/bytes/.../map
        // fields, not the payload's own shape; consumers would decode that wrapper, not the event
        GenericContainer anything = (GenericContainer) avroData.fromConnectData(null, parsed.value());
        assertThat(anything.getSchema().getFullName()).isEqualTo("io.confluent.connect.avro.Anything");
    }

    private record SourceRecordValue(Schema schema, Object value) {
    }
}
