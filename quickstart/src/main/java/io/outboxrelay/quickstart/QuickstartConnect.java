package io.outboxrelay.quickstart;

import io.outboxrelay.embedded.ConnectRestClient;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.runtime.Connect;

/**
 * A Kafka Connect worker in distributed mode, started the way {@code connect-distributed.sh} starts one,
 * with a client for its REST API.
 */
final class QuickstartConnect implements AutoCloseable {
    static final int PREFERRED_PORT = 8083;

    private final Connect<?> connect;
    private final URI restUrl;
    private final ConnectRestClient rest;

    private QuickstartConnect(Connect<?> connect, URI restUrl) {
        this.connect = connect;
        this.restUrl = restUrl;
        this.rest = new ConnectRestClient(restUrl.toString());
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

    /** The REST API, the same calls a user makes with curl. */
    ConnectRestClient rest() {
        return rest;
    }

    /** Stops the worker: its tasks stop gracefully (the relay releases its leases), then the REST server. */
    @Override
    public void close() {
        connect.stop();
    }
}
