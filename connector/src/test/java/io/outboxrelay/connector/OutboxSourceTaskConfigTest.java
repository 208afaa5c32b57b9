package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.mentions.MentionRecoveryConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** The task-only keys: handed to every task, read typed, and never part of the public definition. */
class OutboxSourceTaskConfigTest {
    private static final List<String> TASK_ONLY = List.of(OutboxSourceTaskConfig.TASK_ID,
        OutboxSourceTaskConfig.TASK_KIND, OutboxSourceTaskConfig.RELAY_TASK_INDEX,
        OutboxSourceTaskConfig.RELAY_TASK_COUNT);

    private static Map<String, String> connectorProps() {
        return new HashMap<>(Map.of("name", "orders-relay", "connection.url", "jdbc:postgresql://localhost/app",
            "subscriptions", "hooks", "subscription.hooks.topic", "hooks", "mentions.enabled", "true",
            "tasks.max", "3"));
    }

    private static List<Map<String, String>> taskConfigs(int maxTasks) {
        OutboxSourceConnector connector = new OutboxSourceConnector();
        connector.start(connectorProps());
        return connector.taskConfigs(maxTasks);
    }

    @Test
    void everyConnectorPropReachesEveryTaskBesideItsOwnKeys() {
        List<Map<String, String>> tasks = taskConfigs(3);

        assertThat(tasks).hasSize(3);
        for (Map<String, String> task : tasks) {
            assertThat(task).containsAllEntriesOf(connectorProps());
            assertThat(task.keySet()).containsAll(TASK_ONLY);
        }
    }

    @Test
    void relayTasksReadTheirShareAndIdentityTyped() {
        List<Map<String, String>> tasks = taskConfigs(3);

        OutboxSourceTaskConfig second = new OutboxSourceTaskConfig(tasks.get(1));
        assertThat(second.relayTaskIndex()).isEqualTo(1);
        assertThat(second.relayTaskCount()).isEqualTo(2);
        assertThat(second.taskId()).isEqualTo("1");
        assertThat(second.leaseOwner()).isEqualTo("orders-relay-1");
        assertThat(OutboxSourceTaskConfig.kind(tasks.get(1))).isEqualTo(OutboxSourceTaskConfig.KIND_RELAY);
        assertThat(OutboxSourceTaskConfig.kind(tasks.get(2))).isEqualTo(OutboxSourceTaskConfig.KIND_MENTIONS);
    }

    @Test
    void theMentionTaskReadsItsIdentityTyped() {
        MentionRecoveryConfig mentions = new MentionRecoveryConfig(taskConfigs(3).get(2));

        assertThat(mentions.connectorName()).isEqualTo("orders-relay");
        assertThat(mentions.taskId("0")).isEqualTo("2");
        assertThat(new MentionRecoveryConfig(connectorProps()).taskId(null)).as("a task started by hand").isNull();
    }

    @Test
    void aTaskStartedWithoutTheKeysIsRelayTaskZeroOfOne() {
        Map<String, String> props = connectorProps();
        props.remove("name");
        OutboxSourceTaskConfig config = new OutboxSourceTaskConfig(props);

        assertThat(config.relayTaskIndex()).isZero();
        assertThat(config.relayTaskCount()).isEqualTo(1);
        assertThat(config.leaseOwner()).isEqualTo("outbox-0");
        assertThat(OutboxSourceTaskConfig.kind(props)).isEqualTo(OutboxSourceTaskConfig.KIND_RELAY);
    }

    @Test
    void malformedTaskKeysAreRefusedWithTheKeyNamed() {
        Map<String, String> props = OutboxSourceTaskConfig.forTask(connectorProps(), 0, "relay", 2, 2);
        assertThatThrownBy(() -> new OutboxSourceTaskConfig(props)).isInstanceOf(ConfigException.class)
            .hasMessageContaining(OutboxSourceTaskConfig.RELAY_TASK_INDEX);

        Map<String, String> kind = OutboxSourceTaskConfig.forTask(connectorProps(), 0, "sink", 0, 1);
        assertThatThrownBy(() -> OutboxSourceTaskConfig.kind(kind)).isInstanceOf(ConfigException.class)
            .hasMessageContaining(OutboxSourceTaskConfig.TASK_KIND);

        Map<String, String> count = OutboxSourceTaskConfig.forTask(connectorProps(), 0, "relay", 0, 1);
        count.put(OutboxSourceTaskConfig.RELAY_TASK_COUNT, "two");
        assertThatThrownBy(() -> new OutboxSourceTaskConfig(count)).isInstanceOf(ConfigException.class)
            .hasMessageContaining(OutboxSourceTaskConfig.RELAY_TASK_COUNT);
    }

    @Test
    void taskKeysAreInternalAndOutsideTheConnectorsDefinition() {
        for (String key : TASK_ONLY) {
            assertThat(OutboxSourceTaskConfig.TASK_KEYS.configKeys().get(key).internalConfig).as(key).isTrue();
            assertThat(OutboxSourceConnectorConfig.configDef(connectorProps()).names()).as(key).doesNotContain(key);
        }
        assertThat(MentionRecoveryConfig.CONFIG_DEF.configKeys().get(OutboxSourceTaskConfig.TASK_ID).internalConfig)
            .isTrue();
        assertThat(ConfigReference.render()).doesNotContain("task.id").doesNotContain("task.relay")
            .doesNotContain("task.kind");
    }
}
