package io.outboxrelay.embedded;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * A Connect worker's REST API, the calls a user makes with curl: create or update, stop, resume,
 * delete, status. Calls that meet a worker still joining its group (no answer, 409, 503) are retried.
 */
public final class ConnectRestClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long STATUS_POLL_MS = 100;

    private final URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** {@code baseUrl} is the worker's REST root, e.g. {@code http://localhost:8083}. */
    public ConnectRestClient(String baseUrl) {
        this.base = URI.create(baseUrl);
    }

    /** {@code PUT /connectors/<name>/config}: creates or updates; the worker validates the config first. */
    public void put(String name, Map<String, String> config, Duration timeout) throws InterruptedException {
        String body;
        try {
            body = JSON.writeValueAsString(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/connectors/" + name + "/config"))
                .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)));
            int status = r == null ? -1 : r.statusCode();
            if (status == 200 || status == 201) {
                return;
            }
            boolean joining = status == -1 || status == 409 || status == 503;
            if (!joining || System.nanoTime() > deadline) {
                throw new IllegalStateException("PUT /connectors/" + name + "/config answered " + status + ": "
                    + (r == null ? "no answer" : errorMessage(r.body())));
            }
            Thread.sleep(300);
        }
    }

    /** {@code PUT /connectors/<name>/stop}: tasks shut down (offsets committed), config kept. */
    public void stop(String name) {
        check(send(HttpRequest.newBuilder(uri("/connectors/" + name + "/stop"))
            .PUT(HttpRequest.BodyPublishers.noBody())), "stop " + name);
    }

    /** {@code PUT /connectors/<name>/resume}. */
    public void resume(String name) {
        check(send(HttpRequest.newBuilder(uri("/connectors/" + name + "/resume"))
            .PUT(HttpRequest.BodyPublishers.noBody())), "resume " + name);
    }

    /** {@code DELETE /connectors/<name>}, then waits until the worker no longer lists it. */
    public void delete(String name, Duration timeout) throws InterruptedException {
        send(HttpRequest.newBuilder(uri("/connectors/" + name)).DELETE());
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && status(name) != null) {
            Thread.sleep(STATUS_POLL_MS);
        }
    }

    /** {@code GET /connectors/<name>/status}, or null when the connector does not exist (yet). */
    public JsonNode status(String name) {
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

    /**
     * Waits until the connector is in {@code state} with exactly {@code tasks} tasks in it; fails at once
     * when the connector or a task FAILED, with the first line of its trace.
     */
    public void awaitState(String name, String state, int tasks, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no status yet";
        while (System.nanoTime() < deadline) {
            JsonNode s = status(name);
            if (s != null) {
                String failure = failure(s);
                if (failure != null) {
                    throw new IllegalStateException("connector " + name + ": " + failure);
                }
                int inState = 0;
                for (JsonNode t : s.path("tasks")) {
                    inState += state.equals(t.path("state").asText()) ? 1 : 0;
                }
                String connectorState = s.path("connector").path("state").asText();
                if (state.equals(connectorState) && inState == tasks) {
                    return;
                }
                last = "connector " + connectorState + ", " + inState + " of " + tasks + " tasks " + state;
            }
            Thread.sleep(STATUS_POLL_MS);
        }
        throw new IllegalStateException("connector " + name + " not " + state + " after " + timeout.toSeconds()
            + " s (" + last + ")");
    }

    /** The first FAILED component of a status, with the first line of its trace; null when none failed. */
    public static String failure(JsonNode status) {
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

    private static void check(HttpResponse<String> r, String what) {
        if (r == null || r.statusCode() / 100 != 2) {
            throw new IllegalStateException(what + " answered " + (r == null ? "nothing" : r.statusCode() + ": "
                + errorMessage(r.body())));
        }
    }

    /** The {@code message} of Connect's error body, or the body as it came. */
    static String errorMessage(String body) {
        try {
            JsonNode n = JSON.readTree(body);
            return n != null && n.has("message") ? n.get("message").asText() : body;
        } catch (IOException e) {
            return body;
        }
    }

    private URI uri(String path) {
        return base.resolve(path);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return http.send(request.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null; // not up yet, or gone: callers decide
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
