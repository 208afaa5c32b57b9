package io.outboxrelay.embedded;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Connect worker's REST API, the calls a user makes with curl: create or update, stop, resume,
 * delete, status. Calls that meet a worker still joining its group (no answer, 409, 503) are retried.
 * {@link #request} is the plain call underneath, for tests that must see the exact status and body a user
 * of the API gets.
 */
public final class ConnectRestClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final long STATUS_POLL_MS = 100;

    private final URI base;
    private final Duration requestTimeout;

    /** {@code baseUrl} is the worker's REST root, e.g. {@code http://localhost:8083}. */
    public ConnectRestClient(String baseUrl) {
        this(baseUrl, Duration.ofSeconds(60));
    }

    public ConnectRestClient(String baseUrl, Duration requestTimeout) {
        this.base = URI.create(baseUrl.endsWith("/") ? baseUrl : baseUrl + "/");
        this.requestTimeout = requestTimeout;
    }

    /** The status and body of one call, as they came. */
    public record Reply(int status, String body) {
        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException(body, e);
            }
        }
    }

    /**
     * One call, not retried: {@code method} on {@code path} (relative to the REST root), with
     * {@code jsonBody} as JSON when not null. A worker that does not answer is an {@link UncheckedIOException}.
     */
    public Reply request(String method, String path, Object jsonBody) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path));
        if (jsonBody == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(toJson(jsonBody)));
        }
        return send(request, requestTimeout);
    }

    public Reply get(String path) {
        return request("GET", path, null);
    }

    /**
     * Sends to any HTTP endpoint and keeps status and body; a failed or interrupted exchange is an
     * {@link UncheckedIOException}.
     */
    public static Reply send(HttpRequest.Builder request, Duration timeout) {
        try {
            HttpResponse<String> r = HTTP.send(request.timeout(timeout).build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UncheckedIOException(new InterruptedIOException("interrupted while waiting for " + request));
        }
    }

    /** JSON text of a request body. */
    public static String toJson(Object body) {
        try {
            return JSON.writeValueAsString(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code PUT /connectors/<name>/config}: creates or updates; the worker validates the config first. */
    public void put(String name, Map<String, String> config, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Reply r = attempt("PUT", "connectors/" + name + "/config", config);
            int status = r == null ? -1 : r.status();
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
        check(attempt("PUT", "connectors/" + name + "/stop", null), "stop " + name);
    }

    /** {@code PUT /connectors/<name>/resume}. */
    public void resume(String name) {
        check(attempt("PUT", "connectors/" + name + "/resume", null), "resume " + name);
    }

    /**
     * {@code DELETE /connectors/<name>}, then waits until the worker no longer lists it. Fails when the worker did not
     * answer, or refused (a connector it does not know is deleted already).
     */
    public void delete(String name, Duration timeout) throws InterruptedException {
        Reply r = attempt("DELETE", "connectors/" + name, null);
        if (r == null || r.status() != 404) {
            check(r, "delete " + name);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && status(name) != null) {
            Thread.sleep(STATUS_POLL_MS);
        }
    }

    /** {@code GET /connectors/<name>/status}, or null when the connector does not exist (yet). */
    public JsonNode status(String name) {
        Reply r = attempt("GET", "connectors/" + name + "/status", null);
        if (r == null || r.status() != 200) {
            return null;
        }
        try {
            return r.json();
        } catch (UncheckedIOException e) {
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
        List<String> failed = new ArrayList<>();
        for (JsonNode t : status.path("tasks")) {
            if ("FAILED".equals(t.path("state").asText())) {
                failed.add("task " + t.path("id").asInt() + " FAILED: " + firstLine(t.path("trace").asText()));
            }
        }
        return failed.isEmpty() ? null : String.join("; ", failed);
    }

    private static String firstLine(String trace) {
        int nl = trace.indexOf('\n');
        return nl < 0 ? trace : trace.substring(0, nl);
    }

    private static void check(Reply r, String what) {
        if (r == null || r.status() / 100 != 2) {
            throw new IllegalStateException(what + " answered " + (r == null ? "nothing" : r.status() + ": "
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
        String relative = path.startsWith("/") ? path.substring(1) : path;
        return relative.isEmpty() ? base : base.resolve(relative);
    }

    /** {@link #request}, with null for a worker that does not answer (not up yet, or gone): callers decide. */
    private Reply attempt(String method, String path, Object jsonBody) {
        try {
            return request(method, path, jsonBody);
        } catch (UncheckedIOException e) {
            return null;
        }
    }
}
