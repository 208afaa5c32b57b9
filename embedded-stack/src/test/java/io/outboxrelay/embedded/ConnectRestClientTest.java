package io.outboxrelay.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The REST client against a small HTTP server that answers like a Connect worker would. */
class ConnectRestClientTest {
    private record Answer(int status, String body) {
    }

    private HttpServer server;
    private final Deque<Answer> answers = new ArrayDeque<>();
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private ConnectRestClient client;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::answer);
        server.start();
        client = new ConnectRestClient("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private void answer(HttpExchange exchange) throws IOException {
        requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath());
        Answer a;
        synchronized (answers) {
            a = answers.size() > 1 ? answers.poll() : answers.peek();
        }
        byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(a.status(), body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            exchange.getResponseBody().write(body);
        }
        exchange.close();
    }

    private void answers(Answer... a) {
        synchronized (answers) {
            answers.addAll(List.of(a));
        }
    }

    @Test
    void putIsRetriedWhileTheWorkerIsStillJoiningItsGroup() throws Exception {
        answers(new Answer(409, "{\"message\":\"rebalance\"}"), new Answer(503, ""), new Answer(201, "{}"));
        client.put("c1", Map.of("tasks.max", "1"), Duration.ofSeconds(10));
        assertThat(requests).containsExactly("PUT /connectors/c1/config", "PUT /connectors/c1/config",
            "PUT /connectors/c1/config");
    }

    @Test
    void aRefusedConfigFailsAtOnceWithConnectsMessage() {
        answers(new Answer(400, "{\"error_code\":400,\"message\":\"Connector configuration is invalid\"}"));
        assertThatThrownBy(() -> client.put("c1", Map.of(), Duration.ofSeconds(10)))
            .hasMessage("PUT /connectors/c1/config answered 400: Connector configuration is invalid");
        assertThat(requests).hasSize(1);
    }

    @Test
    void awaitingRunningStopsAtTheFirstFailedTaskWithTheFirstLineOfItsTrace() {
        answers(new Answer(200, """
            {"name":"c1","connector":{"state":"RUNNING"},"tasks":[{"id":0,"state":"RUNNING"},
             {"id":1,"state":"FAILED","trace":"org.apache.kafka.connect.errors.ConnectException: table gone\\n\\tat x"}]}
            """));
        assertThatThrownBy(() -> client.awaitState("c1", "RUNNING", 2, Duration.ofSeconds(30)))
            .hasMessage("connector c1: task 1 FAILED: org.apache.kafka.connect.errors.ConnectException: table gone");
    }

    @Test
    void everyFailedTaskIsNamedNotOnlyTheFirst() {
        answers(new Answer(200, """
            {"name":"c1","connector":{"state":"RUNNING"},"tasks":[{"id":0,"state":"FAILED","trace":"E: a\\n\\tat x"},
             {"id":1,"state":"RUNNING"},{"id":2,"state":"FAILED","trace":"E: b"}]}
            """));
        assertThatThrownBy(() -> client.awaitState("c1", "RUNNING", 3, Duration.ofSeconds(30)))
            .hasMessage("connector c1: task 0 FAILED: E: a; task 2 FAILED: E: b");
    }

    @Test
    void awaitingRunningReturnsOnceEveryTaskRuns() throws Exception {
        answers(new Answer(404, "{}"),
            new Answer(200, "{\"connector\":{\"state\":\"RUNNING\"},\"tasks\":[{\"id\":0,\"state\":\"UNASSIGNED\"}]}"),
            new Answer(200, "{\"connector\":{\"state\":\"RUNNING\"},\"tasks\":[{\"id\":0,\"state\":\"RUNNING\"}]}"));
        client.awaitState("c1", "RUNNING", 1, Duration.ofSeconds(30));
        assertThat(requests).hasSize(3);
    }

    @Test
    void awaitingRunningTimesOutWithTheLastStateSeen() {
        answers(new Answer(200, "{\"connector\":{\"state\":\"RUNNING\"},\"tasks\":[]}"));
        assertThatThrownBy(() -> client.awaitState("c1", "RUNNING", 1, Duration.ofMillis(300)))
            .hasMessageContaining("not RUNNING").hasMessageContaining("connector RUNNING, 0 of 1 tasks RUNNING");
    }
}
