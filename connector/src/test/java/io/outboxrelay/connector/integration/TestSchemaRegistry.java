package io.outboxrelay.connector.integration;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real Apicurio Registry in its own JVM, with its default in-memory (H2) storage: the Quarkus build that
 * Maven Central publishes as {@code io.apicurio:apicurio-registry-app:<version>:zip:all}, which the connector
 * module's {@code pre-integration-test} phase unpacks into {@code connector/target/apicurio-registry/}. It
 * listens on a port of the loopback that it picks itself (read back from its log, so no port race), and its
 * output goes to {@code connector/target/apicurio-registry-<n>.log}. {@link #start()} returns at once, so the
 * caller can start a Connect cluster meanwhile; {@link #awaitReady()} waits for the health check.
 */
public final class TestSchemaRegistry implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern LISTENING = Pattern.compile("Listening on: http://127\\.0\\.0\\.1:(\\d+)");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final Process process;
    private final Path log;
    private final Thread shutdownHook;
    private volatile int port;

    private TestSchemaRegistry(Process process, Path log) {
        this.process = process;
        this.log = log;
        this.shutdownHook = new Thread(process::destroyForcibly);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Starts the registry process; does not wait for it. */
    public static TestSchemaRegistry start() {
        Path home = ProjectFiles.root().resolve("connector").resolve("target").resolve("apicurio-registry");
        Path runner = runnerJar(home);
        Path log = home.getParent().resolve("apicurio-registry-" + ProcessHandle.current().pid() + ".log");
        List<String> cmd = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=0",
            // the registry's own request metrics and audit lines are noise in a test log
            "-Dquarkus.log.category.\"io.apicurio.registry.logging.audit\".level=WARN",
            "-jar", runner.toString()));
        try {
            Process p = new ProcessBuilder(cmd).directory(home.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
            return new TestSchemaRegistry(p, log);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + runner, e);
        }
    }

    private static Path runnerJar(Path home) {
        try (Stream<Path> files = Files.list(home)) {
            List<Path> runners = files.filter(f -> f.getFileName().toString().endsWith("-runner.jar")).toList();
            if (runners.size() != 1) {
                throw new IllegalStateException("expected one *-runner.jar in " + home + ", found " + runners);
            }
            return runners.get(0);
        } catch (IOException e) {
            throw new UncheckedIOException("no unpacked Apicurio Registry in " + home
                + ": run the connector module's pre-integration-test phase (mvn verify) first", e);
        }
    }

    /** Waits until the registry says it is ready, or fails with its log's path. */
    public TestSchemaRegistry awaitReady() {
        await().atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(200))
            .failFast("the registry exited; see " + log, () -> !process.isAlive())
            .until(() -> port() > 0 && status("/health/ready") == 200);
        return this;
    }

    private int port() throws IOException {
        if (port == 0) {
            Matcher m = LISTENING.matcher(Files.readString(log));
            if (m.find()) {
                port = Integer.parseInt(m.group(1));
            }
        }
        return port;
    }

    private int status(String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(baseUrl() + path)).GET().build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1; // not listening yet
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    /** GET of a path under {@link #baseUrl()} that must answer 200: the body. */
    public String getText(String path) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(baseUrl() + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("GET " + path + " answered " + r.statusCode() + ": " + r.body());
            }
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException("GET " + path, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@link #getText} parsed as JSON. */
    public JsonNode getJson(String path) {
        try {
            return JSON.readTree(getText(path));
        } catch (IOException e) {
            throw new UncheckedIOException("GET " + path, e);
        }
    }

    public Path log() {
        return log;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
    }
}
