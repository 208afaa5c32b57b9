package io.outboxrelay.connector.integration;

import com.fasterxml.jackson.databind.JsonNode;
import io.outboxrelay.embedded.ConnectRestClient;
import io.outboxrelay.embedded.ConnectRestClient.Reply;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Plain HTTP against the shared worker's REST API, for tests that must see the exact status and body
 * a user of the API gets (the cluster's own helpers parse or throw). The calls are
 * {@link ConnectRestClient}'s, the REST client the quickstart and the benchmark use.
 */
public final class WorkerRest {
    private static ConnectRestClient client;

    private WorkerRest() {
    }

    public static Reply get(String resource) {
        return client().get(resource);
    }

    public static Reply put(String resource, Map<String, String> body) {
        return client().request("PUT", resource, body);
    }

    /** PUT /connector-plugins/OutboxSourceConnector/config/validate */
    public static Reply validate(Map<String, String> config) {
        return put("connector-plugins/OutboxSourceConnector/config/validate", config);
    }

    /** The validate reply's error messages for one key (empty when none). */
    public static List<String> errorsOn(Reply validateReply, String key) {
        List<String> out = new ArrayList<>();
        for (JsonNode config : validateReply.json().get("configs")) {
            JsonNode value = config.get("value");
            if (value != null && key.equals(value.get("name").asText())) {
                value.get("errors").forEach(e -> out.add(e.asText()));
            }
        }
        return out;
    }

    /** JSON text of a request body. */
    public static String toJson(Object body) {
        return ConnectRestClient.toJson(body);
    }

    /** Sends to any Connect REST endpoint (the fault suite's worker processes too) and keeps status and body. */
    public static Reply send(HttpRequest.Builder request, Duration timeout) {
        return ConnectRestClient.send(request, timeout);
    }

    private static synchronized ConnectRestClient client() {
        if (client == null) {
            client = new ConnectRestClient(TestConnect.cluster().endpointForResource(""), Duration.ofSeconds(60));
        }
        return client;
    }
}
