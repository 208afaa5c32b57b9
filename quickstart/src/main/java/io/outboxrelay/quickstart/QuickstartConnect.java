package io.outboxrelay.quickstart;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.runtime.Connect;

/**
 * A Kafka Connect worker in distributed mode, started the way {@code connect-distributed.sh} starts one,
 * and a small client for its REST API: the same calls a user makes with curl.
 */
final class QuickstartConnect implements AutoCloseable {
    static final int PREFERRED_PORT = 8083;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Connect<?> connect;
    private final URI restUrl;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private QuickstartConnect(Connect<?> connect, URI restUrl) {
        this.connect = connect;
        this.restUrl = restUrl;
    }

    static QuickstartConnect start(String bootstrapServers) {
        int port = Ports.isFree(PREFERRED_PORT) ? PREFERRED_PORT : 0;
        Connect<?> connect = new ConnectDistributed().startConnect(workerProps(bootstrapServers, port));
        URI url = connect.rest().serverUrl();
        return new QuickstartConnect(connect, URI.create("http://localhost:" + url.getPort()));
    }

    /** What a connect-distributed.properties for this one-broker setup would hold. */
    static Map<String, String> workerProps(String bootstrapServers, int port) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("bootstrap.servers", bootstrapServers);
        p.put("group.id", "quickstart-connect");
        p.put("config.storage.topic", "quickstart-connect-configs");
        p.put("offset.storage.topic", "quickstart-connect-offsets");
        p.put("status.storage.topic", "quickstart-connect-status");
        p.put("config.storage.replication.factor", "1");
        p.put("offset.storage.replication.factor", "1");
        p.put("status.storage.replication.factor", "1");
        p.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        p.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        p.put("listeners", "http://localhost:" + port);
        // plugins on the class path that declare themselves through ServiceLoader, as this connector does
        p.put("plugin.discovery", "service_load");
        p.put("offset.flush.interval.ms", "5000");
        return p;
    }

    String restUrl() {
        return restUrl.toString();
    }

    /** {@code PUT /connectors/<name>/config}: creates or updates; the worker validates the config first. */
    void putConnectorConfig(String name, Map<String, String> config, Duration timeout) throws InterruptedException {
        String body;
        try {
            body = JSON.writeValueAsString(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/connectors/" + name + "/config"))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body)));
            int status = r == null ? -1 : r.statusCode();
            if (status == 200 || status == 201) {
                return;
            }
            // 409/503 (or no answer yet) while the worker is still joining its group: try again shortly
            boolean transient_ = status == -1 || status == 409 || status == 503;
            if (!transient_ || System.nanoTime() > deadline) {
                throw new IllegalStateException("PUT /connectors/" + name + "/config answered " + status + ": "
                    + (r == null ? "no answer" : errorMessage(r.body())));
            }
            Thread.sleep(500);
        }
    }

    /** {@code GET /connectors/<name>/status}, or null when the connector does not exist (yet). */
    JsonNode status(String name) {
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/connectors/" + name + "/status")).GET());
        if (r == null || r.statusCode() != 200) {
            return null;
        }
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            return null;
        }
    }

    /** Waits until the connector and {@code tasks} tasks are RUNNING; fails at once when one FAILED. */
    void awaitRunning(String name, int tasks, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no status yet";
        while (System.nanoTime() < deadline) {
            JsonNode s = status(name);
            if (s != null) {
                String failure = failure(s);
                if (failure != null) {
                    throw new IllegalStateException(failure);
                }
                int running = 0;
                for (JsonNode t : s.path("tasks")) {
                    running += "RUNNING".equals(t.path("state").asText()) ? 1 : 0;
                }
                if ("RUNNING".equals(s.path("connector").path("state").asText()) && running == tasks) {
                    return;
                }
                last = "connector " + s.path("connector").path("state").asText() + ", " + running + " of " + tasks
                    + " tasks running";
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException("connector " + name + " not running after " + timeout.toSeconds() + " s ("
            + last + ")");
    }

    /** The first FAILED component of a status, with the first line of its trace; null when none failed. */
    static String failure(JsonNode status) {
        if ("FAILED".equals(status.path("connector").path("state").asText())) {
            return "connector FAILED: " + firstLine(status.path("connector").path("trace").asText());
        }
        for (JsonNode t : status.path("tasks")) {
            if ("FAILED".equals(t.path("state").asText())) {
                return "task " + t.path("id").asInt() + " FAILED: " + firstLine(t.path("trace").asText());
            }
        }
        return null;
    }

    private static String firstLine(String trace) {
        int nl = trace.indexOf('\n');
        return nl < 0 ? trace : trace.substring(0, nl);
    }

    /** {@code DELETE /connectors/<name>}; waits until the worker no longer lists it. */
    void deleteConnector(String name, Duration timeout) throws InterruptedException {
        send(HttpRequest.newBuilder(uri("/connectors/" + name)).DELETE());
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && status(name) != null) {
            Thread.sleep(200);
        }
    }

    private URI uri(String path) {
        return restUrl.resolve(path);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return http.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static String errorMessage(String body) {
        try {
            JsonNode n = JSON.readTree(body);
            return n.has("message") ? n.get("message").asText() : body;
        } catch (IOException e) {
            return body;
        }
    }

    /** Stops the worker: its tasks stop gracefully (the relay releases its leases), then the REST server. */
    @Override
    public void close() {
        connect.stop();
    }
}
