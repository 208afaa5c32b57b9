package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.apicurio.registry.serde.avro.AvroKafkaDeserializer;
import io.apicurio.registry.utils.converter.AvroConverter;
import io.outboxrelay.testsupport.ProjectFiles;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Avro end to end through a real schema registry: a real Apicurio Registry process
 * ({@link TestSchemaRegistry}, in-memory storage), the connector on a real worker with Apicurio's
 * {@code AvroConverter} pointed at it, and plain consumers that deserialize what arrived. For each record
 * shape an Avro converter can take (README, "Record shape"), the schema the registry holds after the first
 * record, fetched over its REST API, must equal the checked-in {@code schemas/avro/*.avsc}, parsed and
 * compared as Avro schemas; {@link #theSchemaComparisonCatchesAChangedSchema} shows that comparison failing
 * for a schema that differs.
 *
 * <p>Confluent's converter and deserializer are not on Maven Central, so they cannot run here. The
 * Confluent-compatible leg has Apicurio's converter write Confluent's wire format and reads it back the
 * way Confluent's deserializer does, through the registry's Confluent-compatible API ({@code /apis/ccompat/v7},
 * the {@code schema.registry.url} a Confluent converter takes).
 */
class AvroSchemaRegistryIT {
    private static final String APICURIO_AVRO = AvroConverter.class.getName();
    private static final String PAYLOAD = "{\"name\": \"Zoë \\\"ACME\\\" 東京\", \"n\": 12.50}";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final List<String> CONNECTORS = new ArrayList<>();
    private static final Map<String, TestDatabase> DBS = new HashMap<>();

    private static TestSchemaRegistry registry;
    /** Apicurio's core API and its Confluent-compatible API, at the paths the config examples give users. */
    private static String coreApi;
    private static String ccompatApi;

    @BeforeAll
    static void start() {
        registry = TestSchemaRegistry.start(); // boots while the worker does
        TestConnect.cluster();
        registry.awaitReady();
        coreApi = registry.baseUrl() + examplePath("outbox-relay-avro-apicurio.json",
            "value.converter.apicurio.registry.url");
        ccompatApi = registry.baseUrl() + examplePath("outbox-relay-avro-confluent-apicurio.json",
            "value.converter.schema.registry.url");

        // envelope: event, poison and recovered-mention records, keys and values all Avro
        MentionRecoveryLegsIT.Chat chat = MentionRecoveryLegsIT.Chat.create("avro_envelope");
        DBS.put("envelope", chat.db);
        chat.message("m1", "ch", "u-hugo", "hi @ada, see above");
        chat.db.insertEvent("order.placed", "order:7", PAYLOAD);
        chat.db.execute("INSERT INTO events(type, subject, payload, headers) VALUES ('order.placed', 'order:8', '{}',"
            + " '{\"event.id\": \"forged\"}')"); // a reserved header: poisoned before producing
        Map<String, String> envelope = new HashMap<>(apicurioAvro("key"));
        envelope.putAll(apicurioAvro("value"));
        envelope.put("outbox.poison.topic", "avro-envelope-poison");
        envelope.put("mentions.enabled", "true");
        envelope.put("mentions.topic", "avro-envelope-mentions");
        envelope.put("mentions.scan.interval.ms", "3600000");
        relay("envelope", chat.db, 2, envelope);

        relay("payload", Map.of("value.format", "payload"));
        relay("bytes", Map.of("value.format", "payload.bytes"));
        relay("json", Map.of("value.format", "payload.json"));

        // Confluent's wire format (magic byte, 4-byte id in the value, no id headers) for keys and values
        Map<String, String> confluent = new HashMap<>();
        for (String side : List.of("key", "value")) {
            confluent.putAll(apicurioAvro(side));
            confluent.put(side + ".converter.apicurio.registry.as-confluent", "true");
            confluent.put(side + ".converter.apicurio.registry.use-id", "contentId");
            confluent.put(side + ".converter.apicurio.registry.headers.enabled", "false");
        }
        relay("confluent", confluent);
    }

    /** Apicurio's AvroConverter on one side, registering in the test's registry (as config-examples/ does). */
    private static Map<String, String> apicurioAvro(String side) {
        return Map.of(side + ".converter", APICURIO_AVRO,
            side + ".converter.apicurio.registry.url", coreApi,
            side + ".converter.apicurio.registry.auto-register", "true",
            side + ".converter.apicurio.registry.find-latest", "true");
    }

    /** A connector with an Avro value converter (keys stay strings unless {@code settings} say otherwise). */
    private static void relay(String shape, Map<String, String> settings) {
        TestDatabase db = TestPostgres.get().createDatabase("avro_" + shape);
        DBS.put(shape, db);
        db.insertEvent("order.placed", "order:7", PAYLOAD);
        Map<String, String> cfg = new HashMap<>(apicurioAvro("value"));
        cfg.putAll(settings);
        relay(shape, db, 1, cfg);
    }

    private static void relay(String shape, TestDatabase db, int tasks, Map<String, String> settings) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "hooks", tasks);
        cfg.put("subscription.hooks.topic", topic(shape));
        cfg.putAll(settings);
        TestConnect.cluster().configureConnector(topic(shape), cfg);
        CONNECTORS.add(topic(shape));
    }

    private static String topic(String shape) {
        return "avro-" + shape;
    }

    @AfterAll
    static void stop() {
        CONNECTORS.forEach(TestConnect.cluster()::deleteConnector);
        if (registry != null) {
            registry.close();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // value.format=envelope (the default): the five checked-in schemas

    @Test
    void envelopeRecordsGoThroughTheRegistryAndComeBackAsTheCheckedInSchemas() throws Exception {
        TestDatabase db = DBS.get("envelope");
        await().atMost(DEADLINE).until(() -> db.queryLong(
            "SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL") == 0);

        ConsumerRecord<Object, Object> event = consumeWithApicurioDeserializer(topic("envelope"));
        List<Object> row = db.query("SELECT id::text, seq, floor(extract(epoch FROM occurred_at) * 1000)::bigint,"
            + " payload::text FROM events WHERE subject = 'order:7'").get(0);
        assertThat(event.key().toString()).isEqualTo("order:7");
        GenericRecord value = (GenericRecord) event.value();
        assertThat(value.getSchema()).as("the writer schema the consumer got from the registry")
            .isEqualTo(avsc("OutboxEvent.avsc"));
        assertThat(value.get("id").toString()).isEqualTo(row.get(0));
        assertThat(value.get("seq")).isEqualTo(row.get(1));
        assertThat(value.get("type").toString()).isEqualTo("order.placed");
        assertThat(value.get("subject").toString()).isEqualTo("order:7");
        assertThat(value.get("occurred_at")).isEqualTo(row.get(2));
        assertThat(value.get("subscription").toString()).isEqualTo("hooks");
        assertThat(value.get("payload").toString()).isEqualTo(row.get(3));
        assertThat(value.get("coalesced_seqs")).isNull();
        assertThat(headerNames(event)).contains("event.id", "event.type", "subscription");

        // a sink connector's view: Apicurio's converter maps it back to the connector's own Connect schema
        try (AvroConverter<Object> sink = new AvroConverter<>()) {
            sink.configure(Map.of("apicurio.registry.url", coreApi), false);
            ConsumerRecord<byte[], byte[]> raw = TestConnect.consumeRaw(1, DEADLINE, topic("envelope")).get(0);
            SchemaAndValue connect = sink.toConnectData(raw.topic(), raw.headers(), raw.value());
            assertThat(connect.schema().name()).isEqualTo("io.outboxrelay.OutboxEvent");
            assertThat(connect.schema().version()).isEqualTo(1);
            assertThat(((Struct) connect.value()).get("occurred_at")).isEqualTo(new Date((Long) row.get(2)));
        }

        ConsumerRecord<Object, Object> poison = consumeWithApicurioDeserializer("avro-envelope-poison");
        assertThat(poison.key().toString()).isEqualTo("order:8");
        assertThat(((GenericRecord) poison.value()).get("reason").toString()).contains("event.id");

        ConsumerRecord<Object, Object> mention = consumeWithApicurioDeserializer("avro-envelope-mentions");
        assertThat(mention.key().toString()).isEqualTo("a-ada");
        assertThat(((GenericRecord) mention.value()).get("message_id").toString()).isEqualTo("m1");
        assertThat(((GenericRecord) mention.value()).get("action").toString()).isEqualTo("OWED");

        // the schema each key and value names (its globalId header) is the checked-in one
        Map<String, ConsumerRecord<Object, Object>> records = Map.of("event", event, "poison", poison, "mention", mention);
        Map<String, String> named = new LinkedHashMap<>();
        named.put("event key", "OutboxKey.avsc");
        named.put("event value", "OutboxEvent.avsc");
        named.put("poison key", "OutboxKey.avsc");
        named.put("poison value", "OutboxPoison.avsc");
        named.put("mention key", "RecoveredMentionKey.avsc");
        named.put("mention value", "RecoveredMention.avsc");
        for (Map.Entry<String, String> e : named.entrySet()) {
            String[] recordAndSide = e.getKey().split(" ");
            assertSameSchema(e.getKey(), schemaNamedBy(records.get(recordAndSide[0]), recordAndSide[1]),
                Files.readString(avscPath(e.getValue())));
        }
        try (Stream<java.nio.file.Path> files = Files.list(avscPath(""))) {
            assertThat(files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".avsc")))
                .as("every checked-in schema was compared with a registered one")
                .containsExactlyInAnyOrderElementsOf(new TreeSet<>(named.values()));
        }

        // and under the artifact ids of the topic strategy (Confluent's subject names <topic>-key/-value). Not
        // avro-envelope-poison-key: the converter caches schemas by content, so a task's second topic with the
        // same key schema reuses the first topic's artifact (the poison key above names avro-envelope-key)
        assertRegistered("avro-envelope-key", "OutboxKey.avsc");
        assertRegistered("avro-envelope-value", "OutboxEvent.avsc");
        assertRegistered("avro-envelope-poison-value", "OutboxPoison.avsc");
        assertRegistered("avro-envelope-mentions-key", "RecoveredMentionKey.avsc");
        assertRegistered("avro-envelope-mentions-value", "RecoveredMention.avsc");
    }

    /** The registry's content for the globalId Apicurio's serializer put in the record's header. */
    private static String schemaNamedBy(ConsumerRecord<?, ?> r, String side) {
        Header id = r.headers().lastHeader("apicurio." + side + ".globalId");
        assertThat(id).as("apicurio.%s.globalId header", side).isNotNull();
        return registry.getText("/apis/registry/v2/ids/globalIds/" + ByteBuffer.wrap(id.value()).getLong());
    }

    /** The negative control of {@link #assertSameSchema}: a changed field or doc fails it. */
    @Test
    void theSchemaComparisonCatchesAChangedSchema() throws IOException {
        String registered = awaitArtifact("avro-envelope-value");
        String checkedIn = Files.readString(avscPath("OutboxEvent.avsc"));
        assertSameSchema("control", registered, checkedIn);

        String retyped = checkedIn.replace("\"name\" : \"payload\",\n    \"type\" : \"string\"",
            "\"name\" : \"payload\",\n    \"type\" : \"bytes\"");
        String renamed = checkedIn.replace("\"name\" : \"subscription\"", "\"name\" : \"subscriber\"");
        String optional = checkedIn.replace("\"name\" : \"seq\",\n    \"type\" : \"long\"",
            "\"name\" : \"seq\",\n    \"type\" : [ \"null\", \"long\" ]");
        String redocumented = checkedIn.replace("One outbox event as delivered", "An outbox event as delivered");
        for (String changed : List.of(retyped, renamed, optional, redocumented)) {
            assertThat(changed).isNotEqualTo(checkedIn);
            assertThatThrownBy(() -> assertSameSchema("changed", registered, changed))
                .isInstanceOf(AssertionError.class);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // the payload formats: payload and payload.bytes work, payload.json has no schema of its own

    @Test
    void payloadIsANullableAvroStringHoldingTheCommittedText() throws Exception {
        ConsumerRecord<Object, Object> r = consumeWithApicurioDeserializerStringKey(topic("payload"));
        assertThat(r.value().toString()).isEqualTo(committedText("payload"));
        assertThat(headerNames(r)).contains("event.id", "event.seq", "event.subject", "event.occurred_at");
        assertRegistered("avro-payload-value", "[\"null\", \"string\"]");
    }

    @Test
    void payloadBytesIsNullableAvroBytesHoldingTheCommittedText() throws Exception {
        ConsumerRecord<Object, Object> r = consumeWithApicurioDeserializerStringKey(topic("bytes"));
        ByteBuffer bytes = (ByteBuffer) r.value();
        assertThat(StandardCharsets.UTF_8.decode(bytes).toString()).isEqualTo(committedText("bytes"));
        assertRegistered("avro-bytes-value", "[\"null\", \"bytes\"]");
    }

    /**
     * Documented as not for Avro: the registry gets the converter's catch-all schema, and a consumer
     * decodes that wrapper, not an object with the payload's fields.
     */
    @Test
    void payloadJsonRegistersTheCatchAllSchemaNotThePayloadsShape() throws Exception {
        ConsumerRecord<Object, Object> r = consumeWithApicurioDeserializerStringKey(topic("json"));
        GenericRecord value = (GenericRecord) r.value();
        assertThat(value.getSchema().getFullName()).isEqualTo("io.confluent.connect.avro.Anything");
        assertThat(value.getSchema().getField("name")).as("no field of the payload's own").isNull();
        Schema registered = new Schema.Parser().parse(awaitArtifact("avro-json-value"));
        assertThat(registered.getFullName()).isEqualTo("io.confluent.connect.avro.Anything");
    }

    // ------------------------------------------------------------------------------------------------
    // Confluent's wire format and the Confluent-compatible API

    /**
     * What a consumer with Confluent's deserializer (and Confluent's converter in a sink) does with a record:
     * read the magic byte and the 4-byte schema id, {@code GET /schemas/ids/{id}} from {@code schema.registry.url},
     * decode, and {@code POST /subjects/{subject}} to learn the version. All of it against Apicurio's
     * {@code /apis/ccompat/v7}, whose subjects must hold the checked-in schemas.
     */
    @Test
    void confluentWireFormatRecordsDecodeThroughTheConfluentCompatibleApi() throws Exception {
        ConsumerRecord<byte[], byte[]> r = TestConnect.consumeRaw(1, DEADLINE, topic("confluent")).get(0);
        assertThat(headerNames(r)).as("the schema id travels in the value, not in headers")
            .noneMatch(h -> h.startsWith("apicurio"));

        ConfluentFramed value = ConfluentFramed.of(r.value());
        Schema writer = new Schema.Parser().parse(ccompat("GET", "/schemas/ids/" + value.schemaId(), null)
            .get("schema").asText());
        assertSameSchema("ccompat /schemas/ids/" + value.schemaId(), writer.toString(),
            Files.readString(avscPath("OutboxEvent.avsc")));
        GenericRecord decoded = value.decode(writer);
        assertThat(decoded.get("subject").toString()).isEqualTo("order:7");
        assertThat(decoded.get("payload").toString()).isEqualTo(committedText("confluent"));

        JsonNode latest = ccompat("GET", "/subjects/avro-confluent-value/versions/latest", null);
        assertThat(latest.get("id").asInt()).as("the id in the record is the subject's id").isEqualTo(value.schemaId());
        assertSameSchema("ccompat latest", latest.get("schema").asText(), Files.readString(avscPath("OutboxEvent.avsc")));
        JsonNode lookup = ccompat("POST", "/subjects/avro-confluent-value",
            JSON.createObjectNode().put("schema", writer.toString()));
        assertThat(lookup.get("version").asInt()).isEqualTo(1);
        assertThat(lookup.get("id").asInt()).isEqualTo(value.schemaId());

        ConfluentFramed key = ConfluentFramed.of(r.key());
        Schema keySchema = new Schema.Parser().parse(ccompat("GET", "/schemas/ids/" + key.schemaId(), null)
            .get("schema").asText());
        assertSameSchema("ccompat key", keySchema.toString(), Files.readString(avscPath("OutboxKey.avsc")));
        assertThat(key.decode(keySchema).toString()).isEqualTo("order:7");

        List<String> subjects = new ArrayList<>();
        ccompat("GET", "/subjects", null).forEach(s -> subjects.add(s.asText()));
        assertThat(subjects).contains("avro-confluent-key", "avro-confluent-value");
    }

    /** A Confluent-framed Avro payload: magic byte 0, a big-endian int schema id, the Avro binary. */
    private record ConfluentFramed(int schemaId, byte[] avro) {
        static ConfluentFramed of(byte[] bytes) {
            assertThat(bytes).as("Confluent wire format").isNotNull().hasSizeGreaterThan(5);
            assertThat(bytes[0]).as("magic byte").isZero();
            return new ConfluentFramed(ByteBuffer.wrap(bytes, 1, 4).getInt(), Arrays.copyOfRange(bytes, 5, bytes.length));
        }

        @SuppressWarnings("unchecked")
        <T> T decode(Schema writer) throws IOException {
            return (T) new GenericDatumReader<>(writer).read(null, DecoderFactory.get().binaryDecoder(avro, null));
        }
    }

    // ------------------------------------------------------------------------------------------------

    /** The first record on {@code topic}, through a KafkaConsumer with Apicurio's Avro deserializer for key and value. */
    private static ConsumerRecord<Object, Object> consumeWithApicurioDeserializer(String topic) {
        return consumeWithApicurioDeserializer(topic, AvroKafkaDeserializer.class);
    }

    /** The same with a string key (StringConverter's), as the payload shapes write it. */
    private static ConsumerRecord<Object, Object> consumeWithApicurioDeserializerStringKey(String topic) {
        return consumeWithApicurioDeserializer(topic, StringDeserializer.class);
    }

    private static ConsumerRecord<Object, Object> consumeWithApicurioDeserializer(String topic,
                                                                                  Class<?> keyDeserializer) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestConnect.cluster().kafka().bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "avro-it-" + System.nanoTime());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, keyDeserializer.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, AvroKafkaDeserializer.class.getName());
        props.put("apicurio.registry.url", coreApi);
        try (KafkaConsumer<Object, Object> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<Object, Object> r : consumer.poll(Duration.ofMillis(200))) {
                    return r;
                }
            }
        }
        throw new AssertionError("no record on " + topic + " within " + DEADLINE);
    }

    private static String committedText(String shape) {
        return (String) DBS.get(shape).query("SELECT payload::text FROM events WHERE subject = 'order:7'").get(0).get(0);
    }

    private static List<String> headerNames(ConsumerRecord<?, ?> r) {
        List<String> names = new ArrayList<>();
        for (Header h : r.headers()) {
            names.add(h.key());
        }
        return names;
    }

    /** The registry's latest version of {@code artifactId} equals {@code expected}: an .avsc file or a schema's JSON. */
    private static void assertRegistered(String artifactId, String expected) throws IOException {
        String schema = expected.endsWith(".avsc") ? Files.readString(avscPath(expected)) : expected;
        assertSameSchema(artifactId, awaitArtifact(artifactId), schema);
        JsonNode meta = registry.getJson("/apis/registry/v2/groups/default/artifacts/" + artifactId + "/meta");
        assertThat(meta.get("type").asText()).as("%s: artifact type", artifactId).isEqualTo("AVRO");
    }

    /**
     * Two schemas are the same contract when they parse to equal Avro schemas (names, fields, types,
     * defaults, {@code connect.*} properties) and print the same (Avro's {@code equals} ignores docs).
     */
    static void assertSameSchema(String what, String actualJson, String expectedJson) {
        Schema actual = new Schema.Parser().parse(actualJson);
        Schema expected = new Schema.Parser().parse(expectedJson);
        assertThat(actual).as("%s: schema", what).isEqualTo(expected);
        assertThat(actual.toString()).as("%s: schema with docs", what).isEqualTo(expected.toString());
    }

    /** The latest content of a registry artifact, once the converter has registered it. */
    private static String awaitArtifact(String artifactId) {
        String path = "/apis/registry/v2/groups/default/artifacts/" + artifactId;
        try {
            await().atMost(DEADLINE).ignoreExceptions().until(() -> registry.getText(path) != null);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("no artifact " + artifactId + "; the registry holds "
                + registry.getText("/apis/registry/v2/search/artifacts?limit=100"), e);
        }
        return registry.getText(path);
    }

    private static JsonNode ccompat(String method, String path, JsonNode body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(ccompatApi + path))
            .header("Accept", "application/vnd.schemaregistry.v1+json");
        if (body != null) {
            b.header("Content-Type", "application/vnd.schemaregistry.v1+json")
                .method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        try {
            HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("%s %s: %s", method, path, r.body()).isEqualTo(200);
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The path of the registry URL a config example sets under {@code key}. */
    private static String examplePath(String example, String key) {
        try {
            JsonNode config = JSON.readTree(ProjectFiles.root().resolve("config-examples").resolve(example).toFile());
            return URI.create(config.get(key).asText()).getPath();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static java.nio.file.Path avscPath(String file) {
        return ProjectFiles.root().resolve("schemas").resolve("avro").resolve(file);
    }

    private static Schema avsc(String file) throws IOException {
        return new Schema.Parser().parse(avscPath(file).toFile());
    }
}
