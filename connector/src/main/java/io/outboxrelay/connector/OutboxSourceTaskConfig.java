package io.outboxrelay.connector;

import java.util.HashMap;
import java.util.Map;

/**
 * A task's view of its configuration: the connector's keys plus the task-only keys the connector adds
 * in {@link #forTask}. Built from the props map Connect hands the task.
 */
final class OutboxSourceTaskConfig {
    static final String TASK_ID = "task.id";
    static final String TASK_KIND = "task.kind";
    static final String RELAY_TASK_INDEX = "task.relay.index";
    static final String RELAY_TASK_COUNT = "task.relay.count";
    static final String KIND_RELAY = "relay";
    static final String KIND_MENTIONS = "mentions";

    private final OutboxSourceConnectorConfig connector;
    private final Map<String, String> props;

    OutboxSourceTaskConfig(Map<String, String> props) {
        this.connector = new OutboxSourceConnectorConfig(props);
        this.props = props;
    }

    /** The connector's props for one task: everything it was given, plus the task-only keys. */
    static Map<String, String> forTask(Map<String, String> connectorProps, int taskId, String kind,
                                       int relayIndex, int relayCount) {
        Map<String, String> out = new HashMap<>(connectorProps);
        out.put(TASK_ID, Integer.toString(taskId));
        out.put(TASK_KIND, kind);
        out.put(RELAY_TASK_INDEX, Integer.toString(relayIndex));
        out.put(RELAY_TASK_COUNT, Integer.toString(relayCount));
        return out;
    }

    OutboxSourceConnectorConfig connector() {
        return connector;
    }

    int relayTaskIndex() {
        return Integer.parseInt(props.getOrDefault(RELAY_TASK_INDEX, "0"));
    }

    int relayTaskCount() {
        return Integer.parseInt(props.getOrDefault(RELAY_TASK_COUNT, "1"));
    }

    String connectorName() {
        return props.getOrDefault("name", "outbox");
    }

    String taskId() {
        return props.getOrDefault(TASK_ID, "0");
    }

    /** Lease owner: connector name and task id, so two connectors on one table never share one. */
    String leaseOwner() {
        return props.getOrDefault("name", "outbox") + "-" + props.getOrDefault(TASK_ID, "0");
    }
}
