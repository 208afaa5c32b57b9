package io.outboxrelay.embedded;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.runtime.Connect;

/**
 * The one way this project runs a Kafka Connect worker in its own JVM outside the tests: the production worker,
 * started the way {@code connect-distributed.sh} starts one ({@code ConnectDistributed}), with a client for its
 * REST API. Plugins load from this JVM's class path. (The integration tests use Kafka's own harness,
 * {@code EmbeddedConnectCluster}, which brings its own broker and a REST port of its choosing; a worker in a
 * process of its own is {@link WorkerProcess}.)
 */
public final class EmbeddedWorker implements AutoCloseable {
    private final Connect<?> connect;
    private final URI restUrl;
    private final ConnectRestClient rest;

    private EmbeddedWorker(Connect<?> connect, URI restUrl) {
        this.connect = connect;
        this.restUrl = restUrl;
        this.rest = new ConnectRestClient(restUrl.toString());
    }

    /**
     * Starts a distributed worker with {@code workerProperties} ({@link WorkerProperties}) whose REST API listens
     * on {@code restPort} of localhost (0: a free port); returns once it has joined its group.
     */
    public static EmbeddedWorker start(Map<String, String> workerProperties, int restPort) {
        Map<String, String> props = new LinkedHashMap<>(workerProperties);
        props.put("listeners", "http://localhost:" + restPort);
        Connect<?> connect = new ConnectDistributed().startConnect(props);
        URI url = connect.rest().serverUrl();
        return new EmbeddedWorker(connect, URI.create("http://localhost:" + url.getPort()));
    }

    /** The REST API's root, e.g. {@code http://localhost:8083}. */
    public String restUrl() {
        return restUrl.toString();
    }

    /** The REST API, the same calls a user makes with curl. */
    public ConnectRestClient rest() {
        return rest;
    }

    /** Stops the worker: its tasks stop gracefully, then the REST server. */
    @Override
    public void close() {
        connect.stop();
    }
}
