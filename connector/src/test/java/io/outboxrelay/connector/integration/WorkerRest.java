package io.outboxrelay.connector.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * Plain HTTP against the shared worker's REST API, for tests that must see the exact status and body
 * a user of the API gets (the cluster's own helpers parse or throw).
 */
public final class WorkerRest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private WorkerRest() {
    }

    public record Reply(int status, String body) {
        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException(body, e);
            }
        }
    }

    public static Reply get(String resource) {
        return send(HttpRequest.newBuilder(uri(resource)).GET());
    }

    public static Reply put(String resource, Map<String, String> body) {
        return send(HttpRequest.newBuilder(uri(resource)).header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(toJson(body))));
    }

    /** PUT /connector-plugins/OutboxSourceConnector/config/validate */
    public static Reply validate(Map<String, String> config) {
        return put("connector-plugins/OutboxSourceConnector/config/validate", config);
    }

    /** The validate reply's error messages for one key (empty when none). */
    public static java.util.List<String> errorsOn(Reply validateReply, String key) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (JsonNode config : validateReply.json().get("configs")) {
            JsonNode value = config.get("value");
            if (value != null && key.equals(value.get("name").asText())) {
                value.get("errors").forEach(e -> out.add(e.asText()));
            }
        }
        return out;
    }

    private static URI uri(String resource) {
        return URI.create(TestConnect.cluster().endpointForResource(resource));
    }

    /** JSON text of a request body. */
    public static String toJson(Object body) {
        try {
            return JSON.writeValueAsString(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Reply send(HttpRequest.Builder request) {
        return send(request, Duration.ofSeconds(60));
    }

    /** Sends to any Connect REST endpoint (the fault suite's worker processes too) and keeps status and body. */
    public static Reply send(HttpRequest.Builder request, Duration timeout) {
        try {
            HttpResponse<String> r = HTTP.send(request.timeout(timeout).build(),
                HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
