package io.outboxrelay.connector;

import io.outboxrelay.common.TaskIdentityKeys;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.ValidString;
import org.apache.kafka.common.config.ConfigException;

/**
 * A task's view of its configuration: the connector's keys ({@link #connector()}) plus the task-only keys
 * the connector adds in {@link #forTask}, defined internal in {@link #TASK_KEYS} so that neither the
 * config reference nor Connect's validation lists them. Built from the props map Connect hands the task.
 */
final class OutboxSourceTaskConfig extends AbstractConfig {
    static final String TASK_ID = TaskIdentityKeys.TASK_ID;
    static final String TASK_KIND = "task.kind";
    static final String RELAY_TASK_INDEX = "task.relay.index";
    static final String RELAY_TASK_COUNT = "task.relay.count";
    static final String KIND_RELAY = "relay";
    static final String KIND_MENTIONS = "mentions";

    /** The keys only a task reads; a task started without them (by hand, in a test) is relay task 0 of 1. */
    static final ConfigDef TASK_KEYS = TaskIdentityKeys.addTo(new ConfigDef())
        .defineInternal(TASK_KIND, Type.STRING, KIND_RELAY, ValidString.in(KIND_RELAY, KIND_MENTIONS),
            Importance.LOW, "Which task this is: a relay task, or the mention-recovery companion task.")
        .defineInternal(RELAY_TASK_INDEX, Type.INT, 0, Range.atLeast(0), Importance.LOW,
            "This relay task's share of subjects: the range of their hash SubjectShare gives it.")
        .defineInternal(RELAY_TASK_COUNT, Type.INT, 1, Range.atLeast(1), Importance.LOW,
            "How many relay tasks share the table's subjects.");

    private final OutboxSourceConnectorConfig connector;

    OutboxSourceTaskConfig(Map<String, String> props) {
        super(TASK_KEYS, props, false);
        if (relayTaskIndex() >= relayTaskCount()) {
            throw new ConfigException(RELAY_TASK_INDEX, relayTaskIndex(), "must be below " + RELAY_TASK_COUNT + "="
                + relayTaskCount());
        }
        this.connector = new OutboxSourceConnectorConfig(props);
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

    /** Which task {@code props} start, {@link #KIND_RELAY} or {@link #KIND_MENTIONS}, without the connector's keys. */
    static String kind(Map<String, String> props) {
        return new AbstractConfig(TASK_KEYS, props, false).getString(TASK_KIND);
    }

    OutboxSourceConnectorConfig connector() {
        return connector;
    }

    int relayTaskIndex() {
        return getInt(RELAY_TASK_INDEX);
    }

    int relayTaskCount() {
        return getInt(RELAY_TASK_COUNT);
    }

    String connectorName() {
        return TaskIdentityKeys.connectorName(this);
    }

    String taskId() {
        return TaskIdentityKeys.taskId(this, "0");
    }

    /** Lease owner: connector name and task id, so two connectors on one table never share one. */
    String leaseOwner() {
        return connectorName() + "-" + taskId();
    }
}
