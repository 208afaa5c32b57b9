package io.outboxrelay.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/** The worker's REST API, the calls a user makes with curl: create, stop, resume, delete, status. */
final class ConnectRest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    ConnectRest(String baseUrl) {
        this.base = URI.create(baseUrl);
    }

    /** {@code PUT /connectors/<name>/config}, retried while the worker is still joining its group. */
    void put(String name, Map<String, String> config) throws InterruptedException {
        String body;
        try {
            body = JSON.writeValueAsString(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            HttpResponse<String> r = send(HttpRequest.newBuilder(base.resolve("connectors/" + name + "/config"))
                .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)));
            int status = r == null ? -1 : r.statusCode();
            if (status == 200 || status == 201) {
                return;
            }
            if ((status != -1 && status != 409 && status != 503) || System.nanoTime() > deadline) {
                throw new IllegalStateException("PUT connector " + name + " answered " + status + ": "
                    + (r == null ? "no answer" : r.body()));
            }
            Thread.sleep(300);
        }
    }

    /** {@code PUT /connectors/<name>/stop}: tasks shut down (offsets committed), config kept. */
    void stop(String name) {
        HttpResponse<String> r = send(HttpRequest.newBuilder(base.resolve("connectors/" + name + "/stop"))
            .PUT(HttpRequest.BodyPublishers.noBody()));
        check(r, "stop " + name);
    }

    void resume(String name) {
        HttpResponse<String> r = send(HttpRequest.newBuilder(base.resolve("connectors/" + name + "/resume"))
            .PUT(HttpRequest.BodyPublishers.noBody()));
        check(r, "resume " + name);
    }

    /** {@code DELETE /connectors/<name>}, then waits until the worker no longer lists it. */
    void delete(String name) throws InterruptedException {
        send(HttpRequest.newBuilder(base.resolve("connectors/" + name)).DELETE());
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline && status(name) != null) {
            Thread.sleep(100);
        }
    }

    JsonNode status(String name) {
        HttpResponse<String> r = send(HttpRequest.newBuilder(base.resolve("connectors/" + name + "/status")).GET());
        if (r == null || r.statusCode() != 200) {
            return null;
        }
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            return null;
        }
    }

    /** Waits until the connector is in {@code state} with {@code tasks} tasks in it; fails when one FAILED. */
    void awaitState(String name, String state, int tasks, Duration timeout) throws InterruptedException {
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
                String cs = s.path("connector").path("state").asText();
                if (state.equals(cs) && inState == tasks) {
                    return;
                }
                last = "connector " + cs + ", " + inState + " of " + tasks + " tasks " + state;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("connector " + name + " not " + state + " after " + timeout.toSeconds()
            + " s (" + last + ")");
    }

    /** The first FAILED component with its trace's first line, or null. */
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

    private static void check(HttpResponse<String> r, String what) {
        if (r == null || r.statusCode() / 100 != 2) {
            throw new IllegalStateException(what + " answered " + (r == null ? "nothing" : r.statusCode() + ": "
                + r.body()));
        }
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return http.send(request.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
