package io.outboxrelay.embedded;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a {@code connect-distributed.properties} for a one-broker setup holds, the same for every worker this
 * project starts (the fault suite's, the benchmark's, the quickstart's): the group and its three internal
 * topics named after it, replication factor 1, string keys and schemaless JSON values, plugins found through
 * their ServiceLoader manifests. Callers add or override what is theirs (listeners, flush interval, ...).
 */
public final class WorkerProperties {
    private WorkerProperties() {
    }

    /** A distributed worker of group {@code group}, internal topics {@code <group>-configs|offsets|status}. */
    public static Map<String, String> distributed(String bootstrapServers, String group) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("bootstrap.servers", bootstrapServers);
        p.put("group.id", group);
        p.put("config.storage.topic", group + "-configs");
        p.put("offset.storage.topic", group + "-offsets");
        p.put("status.storage.topic", group + "-status");
        p.put("config.storage.replication.factor", "1");
        p.put("offset.storage.replication.factor", "1");
        p.put("status.storage.replication.factor", "1");
        p.putAll(converters());
        p.put("plugin.discovery", "service_load");
        return p;
    }

    /** A standalone worker keeping its source offsets in {@code offsetsFile}. */
    public static Map<String, String> standalone(String bootstrapServers, String offsetsFile) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("bootstrap.servers", bootstrapServers);
        p.put("offset.storage.file.filename", offsetsFile);
        p.putAll(converters());
        p.put("plugin.discovery", "service_load");
        return p;
    }

    private static Map<String, String> converters() {
        return Map.of("key.converter", "org.apache.kafka.connect.storage.StringConverter",
            "value.converter", "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable", "false");
    }
}
