package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The deployment examples that cannot run here (no Docker, no Kubernetes): their structure is checked
 * so that a renamed archive, a moved schema file or a plugin mounted where the worker does not look
 * fails the build. Their connector configs are checked by {@link ConfigExamplesTest}.
 */
class DeploymentExamplesTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    /** {@code ${NAME:-default}} in a Compose file. */
    private static final Pattern DEFAULTED = Pattern.compile("\\$\\{([A-Z_]+):-([^}]*)}");
    private static final String ARCHIVE_PREFIX = "outboxrelay-outbox-relay-";

    @Test
    void composeRunsPostgresKraftKafkaAndAWorkerThatFindsThePluginAndTheSchema() throws IOException {
        Path dir = examples().resolve("docker");
        JsonNode services = YAML.readTree(dir.resolve("docker-compose.yml").toFile()).path("services");
        assertThat(names(services)).contains("postgres", "kafka", "connect", "register")
            .noneMatch(n -> n.contains("zookeeper"));

        JsonNode kafka = services.path("kafka").path("environment");
        assertThat(kafka.path("KAFKA_PROCESS_ROLES").asText()).as("KRaft").contains("controller").contains("broker");

        // the schema is applied by the postgres image's init directory, from the repository's file
        Map<String, String> pgMounts = mounts(dir, services.path("postgres"));
        String schemaTarget = pgMounts.get(repo().resolve("schemas/sql/outbox.sql").normalize().toString());
        assertThat(schemaTarget).as("outbox.sql mounted into the init directory")
            .startsWith("/docker-entrypoint-initdb.d/").endsWith(".sql");

        // the worker's plugin.path is where the unpacked archive of this build is mounted
        JsonNode connect = services.path("connect");
        Map<String, String> connectMounts = mounts(dir, connect);
        String workerFile = connect.path("command").get(connect.path("command").size() - 1).asText();
        Path workerSource = connectMounts.entrySet().stream().filter(e -> e.getValue().equals(workerFile))
            .map(e -> Path.of(e.getKey())).findFirst().orElseThrow(() -> new AssertionError(
                "the worker file " + workerFile + " the command names is not mounted: " + connectMounts));
        Properties worker = new Properties();
        try (Reader r = Files.newBufferedReader(workerSource)) {
            worker.load(r);
        }
        String pluginPath = worker.getProperty("plugin.path");
        String archiveDir = connectMounts.entrySet().stream().filter(e -> e.getValue().equals(pluginPath))
            .map(Map.Entry::getKey).findFirst().orElseThrow(() -> new AssertionError(
                "nothing mounted at plugin.path " + pluginPath + ": " + connectMounts));
        Path expected = repo().resolve("connector/target").resolve(ARCHIVE_PREFIX + Version.get()).normalize();
        assertThat(archiveDir).as("the unpacked archive mvn package leaves").isEqualTo(expected.toString());

        // the config the register service PUTs is a file next to the Compose file, with the password from
        // the variable the worker's environment sets
        JsonNode register = services.path("register");
        Map<String, String> registerMounts = mounts(dir, register);
        String command = register.path("command").toString();
        String configTarget = registerMounts.values().stream().filter(t -> command.contains("@" + t)).findFirst()
            .orElseThrow(() -> new AssertionError("register does not PUT a mounted file: " + command));
        assertThat(command).contains("PUT").contains("/connectors/");
        Path config = registerMounts.entrySet().stream().filter(e -> e.getValue().equals(configTarget))
            .map(e -> Path.of(e.getKey())).findFirst().orElseThrow();
        Map<String, String> connector = ConfigExamplesTest.load(config);
        Matcher env = Pattern.compile("\\$\\{env:([A-Z_]+)}").matcher(connector.get("connection.password"));
        assertThat(env.matches()).as("the password comes from the environment provider").isTrue();
        assertThat(connect.path("environment").has(env.group(1))).as("connect sets %s", env.group(1)).isTrue();
        assertThat(worker.getProperty("config.providers")).contains("env");
    }

    @Test
    void strimziBuildsThePluginFromTheReleaseArchive() throws IOException {
        Path file = examples().resolve("strimzi").resolve("kafka-connect.yaml");
        List<JsonNode> docs = new ArrayList<>();
        try (var parser = YAML.getFactory().createParser(file.toFile())) {
            YAML.readValues(parser, JsonNode.class).forEachRemaining(docs::add);
        }
        JsonNode connect = docs.stream().filter(d -> "KafkaConnect".equals(d.path("kind").asText())).findFirst()
            .orElseThrow(() -> new AssertionError("no KafkaConnect in " + file));
        assertThat(connect.path("metadata").path("annotations").path("strimzi.io/use-connector-resources").asText())
            .isEqualTo("true");
        JsonNode artifact = connect.path("spec").path("build").path("plugins").path(0).path("artifacts").path(0);
        assertThat(artifact.path("type").asText()).isEqualTo("zip");
        String release = Version.get().replace("-SNAPSHOT", "");
        assertThat(artifact.path("url").asText()).endsWith("/" + ARCHIVE_PREFIX + release + ".zip");
        assertThat(connect.path("spec").path("build").path("output").path("image").asText()).isNotBlank();

        JsonNode connector = YAML.readTree(examples().resolve("strimzi").resolve("kafka-connector.yaml").toFile());
        assertThat(connector.path("metadata").path("labels").path("strimzi.io/cluster").asText())
            .isEqualTo(connect.path("metadata").path("name").asText());
    }

    /** Host path (absolute, normalized; defaults of ${VAR:-x} filled in) to container path, for short-form volumes. */
    private static Map<String, String> mounts(Path composeDir, JsonNode service) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode v : service.path("volumes")) {
            Matcher m = DEFAULTED.matcher(v.asText());
            StringBuilder filled = new StringBuilder();
            while (m.find()) {
                m.appendReplacement(filled, Matcher.quoteReplacement(m.group(2)));
            }
            m.appendTail(filled);
            String[] parts = filled.toString().split(":");
            assertThat(parts.length).as("short-form volume %s", v.asText()).isBetween(2, 3);
            Path host = composeDir.resolve(parts[0]).normalize();
            if (!host.startsWith(repo().resolve("connector/target"))) {
                assertThat(host).as("mounted from the repository").exists();
            }
            out.put(host.toString(), parts[1]);
        }
        return out;
    }

    private static List<String> names(JsonNode object) {
        List<String> out = new ArrayList<>();
        object.fieldNames().forEachRemaining(out::add);
        return out;
    }

    private static Path examples() {
        return repo().resolve("config-examples");
    }

    private static Path repo() {
        return ProjectFiles.root();
    }
}
