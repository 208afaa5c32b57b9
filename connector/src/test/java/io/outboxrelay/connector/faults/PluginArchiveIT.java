package io.outboxrelay.connector.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.connector.OutboxSourceConnector;
import io.outboxrelay.connector.Version;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The release archive {@code mvn package} leaves, {@code connector/target/outboxrelay-outbox-relay-<version>.zip},
 * is what users download: it has the Confluent Hub name and top folder, a manifest with real values, the
 * license, every document its README links to, and it installs on a worker from {@code plugin.path}
 * exactly as the README says (unzip into a plugin directory, nothing else).
 */
class PluginArchiveIT {
    private static final String OWNER = "outboxrelay";
    private static final String NAME = "outbox-relay";
    /** A Markdown inline link or image: {@code [text](target)} or {@code [text](target "title")}. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

    private static String version;
    private static String top;
    private static Path zip;
    private static Map<String, byte[]> entries;

    @BeforeAll
    static void readArchive() throws IOException {
        version = Version.get();
        top = OWNER + "-" + NAME + "-" + version;
        zip = ProjectFiles.root().resolve("connector").resolve("target").resolve(top + ".zip");
        assertThat(zip).as("the release archive (run mvn package first)").isRegularFile();
        entries = new LinkedHashMap<>();
        try (ZipFile z = new ZipFile(zip.toFile())) {
            for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements(); ) {
                ZipEntry entry = e.nextElement();
                try (InputStream in = z.getInputStream(entry)) {
                    entries.put(entry.getName(), entry.isDirectory() ? new byte[0] : in.readAllBytes());
                }
            }
        }
    }

    @Test
    void everythingSitsUnderOneTopFolderNamedLikeTheArchive() {
        List<String> outside = entries.keySet().stream().filter(n -> !n.startsWith(top + "/")).toList();
        assertThat(outside).as("entries outside %s/", top).isEmpty();
        assertThat(entries).containsKeys(top + "/manifest.json", top + "/LICENSE", top + "/doc/LICENSE",
            top + "/doc/README.md", top + "/doc/CHANGELOG.md",
            top + "/lib/outbox-relay-connector-" + version + ".jar");
        assertThat(entries.keySet()).as("value.format=payload.json parses with Jackson; a worker need not have it")
            .anyMatch(n -> n.matches(top.replace(".", "\\.") + "/lib/jackson-databind-[0-9.]+\\.jar"));
        assertThat(text(top + "/LICENSE")).contains("Apache License").contains("Version 2.0, January 2004");
        List<String> etcDocs = entries.keySet().stream()
            .filter(n -> n.startsWith(top + "/etc/") && n.endsWith(".md")).toList();
        assertThat(etcDocs).as("etc/ holds configs; their README lives under doc/config-examples/").isEmpty();
    }

    @Test
    void libHoldsOurModulesAndTheirRuntimeLibrariesButNothingTheWorkerProvides() {
        String lib = top + "/lib/";
        List<String> jars = entries.keySet().stream().filter(n -> n.startsWith(lib) && n.endsWith(".jar"))
            .map(n -> n.substring(lib.length()).replaceAll("-\\d[^/]*\\.jar$", "")).sorted().toList();
        // Jackson too (headers, fanout, value.format=payload.json): a plugin's class loader does not see the
        // worker's Jackson
        assertThat(jars).containsExactly("HikariCP", "jackson-annotations", "jackson-core", "jackson-databind",
            "mention-recovery-task", "outbox-relay-common", "outbox-relay-connector", "postgresql");
    }

    @Test
    void theManifestHasRealValuesAndNoEmptyFields() throws IOException {
        JsonNode m = new ObjectMapper().readTree(entries.get(top + "/manifest.json"));
        assertThat(m.path("name").asText()).isEqualTo(NAME);
        assertThat(m.path("version").asText()).isEqualTo(version);
        assertThat(m.path("owner").path("username").asText()).isEqualTo(OWNER);
        assertThat(m.path("owner").path("name").asText()).isNotBlank();
        assertThat(m.path("title").asText()).isNotBlank();
        assertThat(m.path("description").asText()).isNotBlank();
        assertThat(m.path("documentation_url").asText()).startsWith("https://");
        assertThat(m.path("source_url").asText()).startsWith("https://");
        assertThat(m.path("license").path(0).path("name").asText()).contains("Apache");
        assertThat(m.path("license").path(0).path("url").asText()).startsWith("https://");
        assertThat(m.path("component_types").toString()).isEqualTo("[\"source\"]");
        assertThat(m.path("tags").size()).isPositive();
        assertThat(m.path("requirements").size()).isPositive();
        List<String> empty = new ArrayList<>();
        collectEmpty(m, "", empty);
        assertThat(empty).as("empty manifest fields (drop them instead)").isEmpty();
    }

    @Test
    void everyRelativeLinkInTheArchivesDocumentsResolvesInsideTheArchive() {
        Set<String> names = new TreeSet<>(entries.keySet());
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (String doc : names) {
            if (!doc.endsWith(".md")) {
                continue;
            }
            Matcher m = LINK.matcher(text(doc));
            while (m.find()) {
                String target = m.group(1);
                if (target.startsWith("#") || target.matches("^[a-zA-Z][a-zA-Z+.-]*:.*")) {
                    continue; // an anchor in the same page, or an absolute URL
                }
                int hash = target.indexOf('#');
                String path = hash >= 0 ? target.substring(0, hash) : target;
                String resolved = Path.of(doc).resolveSibling(path).normalize().toString().replace('\\', '/');
                checked++;
                boolean found = resolved.startsWith(top + "/")
                    && (names.contains(resolved) || names.stream().anyMatch(n -> n.startsWith(resolved + "/")));
                if (!found) {
                    broken.add(doc + " -> " + target);
                }
            }
        }
        assertThat(checked).as("relative links checked").isGreaterThan(20);
        assertThat(broken).as("links that do not resolve inside the unpacked archive").isEmpty();
    }

    /**
     * Unzips the archive into an empty plugin directory, starts a worker process whose classpath holds
     * only Kafka, with {@code plugin.path} at that directory and service-loader discovery, and asks it
     * which connectors it found.
     */
    @Test
    void theArchiveUnzippedIntoPluginPathIsListedByAWorker() {
        Path plugins = ChildJvm.installReleaseArchive("plugin-install");
        String bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        try (FaultWorker worker = FaultWorker.standalone("plugin-install", bootstrap, plugins)) {
            worker.start();
            JsonNode listed = worker.connectorPlugins();
            List<String> ours = new ArrayList<>();
            for (JsonNode p : listed) {
                if (p.path("class").asText().startsWith("io.outboxrelay.")) {
                    ours.add(p.path("class").asText() + " " + p.path("type").asText() + " " + p.path("version").asText());
                }
            }
            assertThat(ours).as("our connectors in GET /connector-plugins: %s; worker log %s", listed, worker.log())
                .containsExactly(OutboxSourceConnector.class.getName() + " source " + version);
        }
    }

    private static String text(String entry) {
        return new String(entries.get(entry), StandardCharsets.UTF_8);
    }

    private static void collectEmpty(JsonNode node, String path, List<String> out) {
        if ((node.isContainerNode() && node.isEmpty()) || (node.isTextual() && node.asText().isBlank())
            || node.isNull()) {
            out.add(path.isEmpty() ? "(root)" : path);
        }
        if (node.isObject()) {
            node.properties().forEach(e -> collectEmpty(e.getValue(), path + "/" + e.getKey(), out));
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                collectEmpty(node.get(i), path + "/" + i, out);
            }
        }
    }
}
