package io.outboxrelay.connector;

import io.outboxrelay.common.TaskIdentityKeys;
import io.outboxrelay.mentions.MentionRecoveryConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Relays a PostgreSQL transactional outbox to Kafka: tasks claim un-fanned rows with
 * {@code FOR UPDATE SKIP LOCKED} plus a committed lease (never a {@code seq} cursor), produce one record
 * per matching subscription, and stamp {@code fanned_out_at} only after the producer acknowledged. With
 * {@code mentions.enabled=true} one of the tasks is the mention-recovery companion task.
 */
public class OutboxSourceConnector extends SourceConnector {
    private static final Logger log = LoggerFactory.getLogger(OutboxSourceConnector.class);
    static final String TASKS_MAX = "tasks.max";

    private Map<String, String> props;
    private OutboxSourceConnectorConfig config;

    @Override
    public String version() {
        return Version.get();
    }

    @Override
    public void start(Map<String, String> props) {
        this.props = Map.copyOf(props);
        this.config = new OutboxSourceConnectorConfig(props);
        log.info("Outbox relay connector {} starting on table {} with subscriptions {}{}", props.get("name"),
            config.table(), config.getList(OutboxSourceConnectorConfig.SUBSCRIPTIONS),
            config.mentionsEnabled() ? " and mention recovery" : "");
    }

    @Override
    public Class<? extends Task> taskClass() {
        return OutboxSourceTask.class;
    }

    /**
     * One config per relay task, each owning a share of subjects (a range of their hash, {@link SubjectShare});
     * with mention recovery on, the last task is the companion task.
     */
    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        boolean mentions = config.mentionsEnabled();
        int relayTasks = mentions ? Math.max(1, maxTasks - 1) : Math.max(1, maxTasks);
        List<Map<String, String>> out = new ArrayList<>(relayTasks + 1);
        for (int i = 0; i < relayTasks; i++) {
            out.add(OutboxSourceTaskConfig.forTask(props, i, OutboxSourceTaskConfig.KIND_RELAY, i, relayTasks));
        }
        if (mentions) {
            out.add(OutboxSourceTaskConfig.forTask(props, relayTasks, OutboxSourceTaskConfig.KIND_MENTIONS, 0,
                relayTasks));
        }
        return out;
    }

    @Override
    public void stop() {
        log.info("Outbox relay connector {} stopped", props == null ? "" : props.get("name"));
    }

    @Override
    public ConfigDef config() {
        return OutboxSourceConnectorConfig.BASE_CONFIG_DEF;
    }

    /**
     * Validates the keys (including every {@code subscription.<name>.*} key, and refusing keys of the connector's
     * namespaces that it does not define: {@link UnknownKeys}), then checks live that the
     * database is reachable and the table, its columns and the needed privileges are there, attaching
     * each problem to the key it concerns.
     */
    @Override
    public Config validate(Map<String, String> connectorConfigs) {
        ConfigDef def = OutboxSourceConnectorConfig.configDef(connectorConfigs);
        List<ConfigValue> values = def.validate(connectorConfigs);
        Config result = new Config(values);
        checkTaskCount(connectorConfigs, result);
        checkCloudEventsSource(connectorConfigs, result);
        checkChannelsDiffer(connectorConfigs, result);
        ExactlyOnceRules.check(connectorConfigs, result);
        UnknownKeys.check(def, connectorConfigs, result);
        if (values.stream().allMatch(v -> v.errorMessages().isEmpty())) {
            new OutboxLiveValidator(new OutboxSourceConnectorConfig(connectorConfigs),
                TaskIdentityKeys.connectorName(connectorConfigs)).check(result);
        }
        return result;
    }

    private static void checkTaskCount(Map<String, String> props, Config result) {
        if (!Boolean.parseBoolean(props.getOrDefault(MentionRecoveryConfig.ENABLED, "false"))) {
            return;
        }
        int tasksMax;
        try {
            tasksMax = Integer.parseInt(props.getOrDefault(TASKS_MAX, "1").trim());
        } catch (NumberFormatException e) {
            return; // Connect reports a malformed tasks.max itself
        }
        if (tasksMax < 2) {
            OutboxLiveValidator.error(result, MentionRecoveryConfig.ENABLED, "mentions.enabled=true runs the"
                + " mention-recovery companion task in one of the connector's task slots: set tasks.max to at"
                + " least 2 (relay tasks = tasks.max - 1)");
        }
    }

    /**
     * Receipts on the wake-up channel would wake every waiting relay task at every stamp: a claim per commit, which
     * the wake-up exists to avoid (docs/wakeup.md), and the receipts' listeners would get the wake-ups' empty payloads.
     */
    private static void checkChannelsDiffer(Map<String, String> props, Config result) {
        String wake = props.getOrDefault(OutboxSourceConnectorConfig.NOTIFY_CHANNEL, "outbox_events").trim();
        String receipts = props.getOrDefault(OutboxSourceConnectorConfig.FANNED_CHANNEL, "outbox_events_fanned").trim();
        if (!receipts.isEmpty() && receipts.equals(wake)) {
            OutboxLiveValidator.error(result, OutboxSourceConnectorConfig.FANNED_CHANNEL,
                OutboxSourceConnectorConfig.FANNED_CHANNEL + "=" + receipts + " is also " + OutboxSourceConnectorConfig
                    .NOTIFY_CHANNEL + ": every receipt would wake every waiting relay task, a claim per commit; give the"
                    + " receipts a channel of their own (the default is outbox_events_fanned)");
        }
    }

    private static void checkCloudEventsSource(Map<String, String> props, Config result) {
        String headersFormat = props.getOrDefault(OutboxSourceConnectorConfig.HEADERS_FORMAT, "plain");
        String source = props.getOrDefault(OutboxSourceConnectorConfig.CLOUDEVENTS_SOURCE, "");
        if ("cloudevents".equalsIgnoreCase(headersFormat.trim()) && source.isBlank()) {
            OutboxLiveValidator.error(result, OutboxSourceConnectorConfig.CLOUDEVENTS_SOURCE,
                OutboxSourceConnectorConfig.CLOUDEVENTS_SOURCE_REQUIRED);
        }
    }

    /**
     * SUPPORTED whenever {@code errors.tolerance=none}, with any transaction boundary: the records' source offsets
     * name the rows produced and not yet stamped, and a task that starts stamps those instead of producing them
     * again (docs/exactly-once.md). Under {@code errors.tolerance=all}, UNSUPPORTED; {@link #validate} says why.
     */
    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
        return ExactlyOnceRules.support(connectorConfig);
    }

    /** The relay ends one transaction per claimed list when asked to define them; not under errors.tolerance=all. */
    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> connectorConfig) {
        return ExactlyOnceRules.transactionBoundaries(connectorConfig);
    }

    /** Resets of the committed offsets are accepted; a written value that names rows is refused. */
    @Override
    public boolean alterOffsets(Map<String, String> connectorConfig, Map<Map<String, ?>, Map<String, ?>> offsets) {
        ExactlyOnceRules.checkAlteredOffsets(offsets);
        return true;
    }
}
