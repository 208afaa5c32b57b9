package io.outboxrelay.connector;

import java.util.HashMap;
import java.util.Map;

/** Connector configs for unit tests: the two required keys, plus the given key-value pairs. */
final class TestConfigs {
    private TestConfigs() {
    }

    static OutboxSourceConnectorConfig minimal(String... keysAndValues) {
        Map<String, String> props = new HashMap<>(Map.of("connection.url", "jdbc:postgresql://localhost/app",
            "subscriptions", "hooks"));
        for (int i = 0; i < keysAndValues.length; i += 2) {
            props.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return new OutboxSourceConnectorConfig(props);
    }
}
