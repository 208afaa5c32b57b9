package io.outboxrelay.common;

import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;

/**
 * What names a task, in the props the connector hands each of its tasks: Connect's connector {@code name}
 * and the {@code task.id} the connector adds. Internal keys ({@link ConfigDef#defineInternal}): no
 * reference, REST validation or UI lists them, and a task reads them typed from its own config.
 */
public final class TaskIdentityKeys {
    /** Connect's connector name, which Connect passes on to every task. */
    public static final String CONNECTOR_NAME = "name";
    /** The task's number among the connector's tasks; unset only where a test starts a task by hand. */
    public static final String TASK_ID = "task.id";
    /** What a task without {@link #CONNECTOR_NAME} (one started by hand) calls its connector. */
    public static final String DEFAULT_CONNECTOR_NAME = "outbox";

    private TaskIdentityKeys() {
    }

    /** Only {@link #CONNECTOR_NAME}, for reading it from a connector's props as its tasks read it. */
    private static final ConfigDef NAME_ONLY = defineName(new ConfigDef());

    /** Adds both keys, internal, to a task's own definition. */
    public static ConfigDef addTo(ConfigDef def) {
        return defineName(def)
            .defineInternal(TASK_ID, Type.INT, null, TaskIdentityKeys::ensureTaskId, Importance.LOW,
                "The task's number, set by the connector in taskConfigs.");
    }

    private static ConfigDef defineName(ConfigDef def) {
        return def.defineInternal(CONNECTOR_NAME, Type.STRING, DEFAULT_CONNECTOR_NAME, null, Importance.LOW,
            "The connector's name, as Connect passes it to the task.");
    }

    /** The connector's name in a connector's props, read as its tasks read it (trimmed, as every string key). */
    public static String connectorName(Map<String, String> props) {
        return (String) NAME_ONLY.parse(props).get(CONNECTOR_NAME);
    }

    /** The connector's name. */
    public static String connectorName(AbstractConfig config) {
        return config.getString(CONNECTOR_NAME);
    }

    /** The task's number as text, or {@code whenUnset} for a task started without one. */
    public static String taskId(AbstractConfig config, String whenUnset) {
        Integer id = config.getInt(TASK_ID);
        return id == null ? whenUnset : id.toString();
    }

    private static void ensureTaskId(String name, Object value) {
        if (value != null && (Integer) value < 0) {
            throw new ConfigException(name, value, "a task id is a number from 0");
        }
    }
}
