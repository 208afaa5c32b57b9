package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.outboxrelay.mentions.MentionRecoveryConfig;
import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.storage.Converter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every file in {@code config-examples/} is a config a user copies: its connector keys must pass the
 * connector's own {@code ConfigDef} validation, name no key the connector does not know (a typo there
 * is silently ignored by Connect), and be complete enough to run (a registry URL for an Avro converter,
 * tasks for the mention task). Guards against examples rotting when a key is renamed or tightened.
 */
class ConfigExamplesTest {
    /** Keys Connect itself reads from a connector config; the connector's ConfigDef does not define them. */
    private static final List<String> FRAMEWORK_KEYS = List.of("name", "connector.class", "tasks.max",
        "tasks.max.enforce", "key.converter", "value.converter", "header.converter", "config.action.reload",
        "exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms",
        "offsets.storage.topic");
    private static final List<String> FRAMEWORK_PREFIXES = List.of("key.converter.", "value.converter.",
        "header.converter.", "transforms", "predicates", "errors.", "topic.creation.", "producer.override.",
        "admin.override.");
    /** What quickstart.sh fills in; sample values so the template validates like the real thing. */
    private static final Map<String, String> QUICKSTART_VARIABLES = Map.of(
        "QUICKSTART_DB_URL", "jdbc:postgresql://localhost:55432/postgres",
        "QUICKSTART_DB_USER", "relay",
        "QUICKSTART_SECRETS", "/tmp/outbox-relay-quickstart-1.properties");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([^}:]*)}");
    private static final String CONFLUENT_AVRO = "io.confluent.connect.avro.AvroConverter";
    private static final String APICURIO_AVRO = "io.apicurio.registry.utils.converter.AvroConverter";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /**
     * Every connector or worker config under {@code config-examples/}, subfolders included: JSON, properties,
     * and Strimzi {@code KafkaConnector} resources. The monitoring kit's JSON and YAML are not configs.
     */
    static Stream<Path> examples() throws IOException {
        try (Stream<Path> files = Files.walk(examplesDir())) {
            List<Path> out = files
                .filter(p -> !examplesDir().relativize(p).startsWith("monitoring"))
                .filter(p -> p.toString().endsWith(".json") || p.toString().endsWith(".properties")
                    || isKafkaConnectorResource(p))
                .sorted().toList();
            assertThat(out).as("examples in %s", examplesDir()).isNotEmpty();
            return out.stream();
        }
    }

    static Stream<Path> connectorExamples() throws IOException {
        return examples().filter(p -> !isWorkerFile(p));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("connectorExamples")
    void everyConnectorKeyPassesTheConnectorsConfigDef(Path file) throws IOException {
        Map<String, String> props = load(file);
        assertThat(props.get("connector.class")).as("%s: connector.class", name(file))
            .isEqualTo(OutboxSourceConnector.class.getName());

        ConfigDef def = OutboxSourceConnectorConfig.configDef(props);
        List<String> errors = new ArrayList<>();
        for (ConfigValue v : def.validate(props)) {
            for (String message : v.errorMessages()) {
                errors.add(v.name() + ": " + message);
            }
        }
        assertThat(errors).as("%s: ConfigDef errors", name(file)).isEmpty();

        List<String> unknown = props.keySet().stream()
            .filter(k -> !def.names().contains(k) && !isFrameworkKey(k)).sorted().toList();
        assertThat(unknown).as("%s: keys neither the connector nor Connect knows (typos?)", name(file)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("connectorExamples")
    void everyConnectorExampleHasWhatItNeedsToRun(Path file) throws IOException {
        Map<String, String> props = load(file);
        int tasksMax = Integer.parseInt(props.getOrDefault("tasks.max", "1").trim());
        assertThat(tasksMax).as("%s: tasks.max", name(file)).isPositive();
        if (Boolean.parseBoolean(props.getOrDefault(MentionRecoveryConfig.ENABLED, "false"))) {
            assertThat(tasksMax).as("%s: mentions.enabled=true takes one task slot, so tasks.max >= 2", name(file))
                .isGreaterThanOrEqualTo(2);
        }
        for (String side : List.of("key", "value")) {
            String converter = props.get(side + ".converter");
            assertThat(converter).as("%s: %s.converter (do not rely on the worker's default)", name(file), side)
                .isNotBlank();
            if (CONFLUENT_AVRO.equals(converter)) {
                assertThat(props).as("%s: %s converter registry", name(file), side)
                    .containsKey(side + ".converter.schema.registry.url");
            }
            if (APICURIO_AVRO.equals(converter)) {
                assertThat(props).as("%s: %s converter registry", name(file), side)
                    .containsKey(side + ".converter.apicurio.registry.url");
            }
        }
        assertThat(props.getOrDefault("errors.tolerance", "none")).as("%s: errors.tolerance", name(file))
            .isEqualTo("none");
    }

    @Test
    void theApicurioConverterTheExampleNamesExists() throws ClassNotFoundException {
        assertThat(Converter.class).isAssignableFrom(Class.forName(APICURIO_AVRO));
    }

    @Test
    void workerFilesSetThePluginPathAndTheConfigProvidersTheExamplesUse() throws IOException {
        List<Path> workers = examples().filter(ConfigExamplesTest::isWorkerFile).toList();
        assertThat(workers).isNotEmpty();
        for (Path worker : workers) {
            Map<String, String> props = load(worker);
            assertThat(props).as(name(worker)).containsKeys("bootstrap.servers", "plugin.path")
                .containsEntry("config.providers.file.class",
                    "org.apache.kafka.common.config.provider.FileConfigProvider");
        }
    }

    /** The standalone example says it lists every key; a key added to the connector must be added there too. */
    @Test
    void theStandaloneExampleListsEveryKeyOfTheConnector() throws IOException {
        Path file = examplesDir().resolve("outbox-relay-standalone.properties");
        String text = Files.readString(file);
        List<String> missing = new ArrayList<>();
        for (String key : OutboxSourceConnectorConfig.configDef(Map.of("subscriptions", "corpus.index")).names()) {
            String generic = key.replace("subscription.corpus.index.", "subscription.<name>.");
            Pattern line = Pattern.compile("(?m)^#?" + Pattern.quote(key) + "=");
            if (!line.matcher(text).find() && !text.contains(generic)) {
                missing.add(key);
            }
        }
        assertThat(missing).as("keys not in %s (as key=value or #key=default)", name(file)).isEmpty();
    }

    @Test
    void theReadmeDescribesEveryExample() throws IOException {
        String readme = Files.readString(examplesDir().resolve("README.md"));
        List<String> missing = examples().map(ConfigExamplesTest::name).filter(n -> !readme.contains(n)).toList();
        assertThat(missing).as("examples not described in config-examples/README.md").isEmpty();
    }

    private static boolean isFrameworkKey(String key) {
        return FRAMEWORK_KEYS.contains(key) || FRAMEWORK_PREFIXES.stream().anyMatch(key::startsWith);
    }

    /** A worker config (no connector.class), named so; a connector example without connector.class fails above. */
    private static boolean isWorkerFile(Path file) {
        return name(file).contains("worker");
    }

    /** The path below config-examples/, e.g. {@code strimzi/kafka-connector.yaml}. */
    private static String name(Path file) {
        return examplesDir().relativize(file.toAbsolutePath()).toString().replace('\\', '/');
    }

    /** A Strimzi {@code KafkaConnector} resource: YAML whose {@code kind} says so. */
    private static boolean isKafkaConnectorResource(Path file) {
        String n = file.toString();
        if (!n.endsWith(".yaml") && !n.endsWith(".yml")) {
            return false;
        }
        try {
            return "KafkaConnector".equals(YAML.readTree(file.toFile()).path("kind").asText());
        } catch (IOException e) {
            throw new UncheckedIOException(file + " is not YAML", e);
        }
    }

    /**
     * A {@code KafkaConnector}'s config as Connect gets it: Strimzi passes {@code spec.config} with
     * {@code spec.class} as {@code connector.class} and {@code spec.tasksMax} as {@code tasks.max}, and
     * turns YAML numbers and booleans into strings.
     */
    private static Map<String, String> loadKafkaConnector(Path file) throws IOException {
        JsonNode spec = YAML.readTree(file.toFile()).path("spec");
        assertThat(spec.path("config").isObject()).as("%s: spec.config", name(file)).isTrue();
        assertThat(spec.path("config").has("connector.class") || spec.path("config").has("tasks.max"))
            .as("%s: Strimzi ignores connector.class and tasks.max in spec.config; use spec.class and"
                + " spec.tasksMax", name(file)).isFalse();
        Map<String, String> raw = new LinkedHashMap<>();
        raw.put("connector.class", spec.path("class").asText());
        if (spec.has("tasksMax")) {
            raw.put("tasks.max", spec.path("tasksMax").asText());
        }
        for (Map.Entry<String, JsonNode> e : spec.path("config").properties()) {
            assertThat(e.getValue().isValueNode() && !e.getValue().isNull())
                .as("%s: spec.config.%s is a scalar", name(file), e.getKey()).isTrue();
            raw.put(e.getKey(), e.getValue().asText());
        }
        return raw;
    }

    /** The file's keys, with the quickstart's ${VARIABLES} filled in; config-provider references stay. */
    static Map<String, String> load(Path file) throws IOException {
        Map<String, String> raw = new LinkedHashMap<>();
        if (isKafkaConnectorResource(file)) {
            raw.putAll(loadKafkaConnector(file));
        } else if (file.toString().endsWith(".json")) {
            JsonNode root = new ObjectMapper().readTree(file.toFile());
            assertThat(root.isObject()).as("%s is a JSON object", name(file)).isTrue();
            for (Map.Entry<String, JsonNode> e : root.properties()) {
                assertThat(e.getValue().isTextual()).as("%s: \"%s\" is a JSON string (Connect config values are"
                    + " strings)", name(file), e.getKey()).isTrue();
                raw.put(e.getKey(), e.getValue().asText());
            }
        } else {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(file)) {
                p.load(r);
            }
            for (String k : p.stringPropertyNames()) {
                raw.put(k, p.getProperty(k));
            }
        }
        Map<String, String> out = new LinkedHashMap<>();
        raw.forEach((k, v) -> out.put(k, substitute(file, k, v)));
        return out;
    }

    private static String substitute(Path file, String key, String value) {
        Matcher m = VARIABLE.matcher(value);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String replacement = QUICKSTART_VARIABLES.get(m.group(1));
            assertThat(replacement).as("%s: %s uses ${%s}; use a config provider (${file:path:key}, ${env:NAME})"
                + " or one of %s", name(file), key, m.group(1), QUICKSTART_VARIABLES.keySet()).isNotNull();
            m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    private static Path examplesDir() {
        return ProjectFiles.root().resolve("config-examples");
    }
}
