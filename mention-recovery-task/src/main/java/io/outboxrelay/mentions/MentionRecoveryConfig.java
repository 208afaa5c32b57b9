package io.outboxrelay.mentions;

import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.TaskIdentityKeys;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;

/**
 * The {@code mentions.*} keys of the mention-recovery companion task, with typed accessors. The
 * connector declares them through {@link #addTo}; the task parses its (full connector) props with
 * {@link #MentionRecoveryConfig(Map)}, ignoring the relay's keys.
 */
public final class MentionRecoveryConfig extends AbstractConfig {
    public static final String GROUP = "Mention recovery";

    public static final String ENABLED = "mentions.enabled";
    public static final String TOPIC = "mentions.topic";
    public static final String BATCH_SIZE = "mentions.batch.size";
    public static final String MIN_AGE_MS = "mentions.min.age.ms";
    public static final String SCAN_INTERVAL_MS = "mentions.scan.interval.ms";
    public static final String SESSION_LIVE_MS = "mentions.session.live.ms";
    public static final String NOTIFY_CHANNEL = "mentions.notify.channel";

    /** Application name the task's sessions show in {@code pg_stat_activity}. */
    public static final String APPLICATION_NAME = "outbox-relay-mentions";

    /** The task's own definition: the connection and mention keys, and (internal) what names the task. */
    public static final ConfigDef CONFIG_DEF =
        TaskIdentityKeys.addTo(addTo(ConnectionConfigKeys.addTo(new ConfigDef())));

    public MentionRecoveryConfig(Map<String, String> props) {
        super(CONFIG_DEF, props, false);
    }

    /** Adds the mention keys to {@code def} (the connector's own definition, or {@link #CONFIG_DEF}). */
    public static ConfigDef addTo(ConfigDef def) {
        int order = 0;
        return def
            .define(ENABLED, Type.BOOLEAN, false, Importance.MEDIUM,
                "Run the mention-recovery companion task: it routes chat @mentions of agent members in "
                    + "messages whose mentions_routed_at is still NULL and publishes one record per routed "
                    + "member to mentions.topic. Needs the tables of schemas/sql/mentions.sql.",
                GROUP, ++order, Width.SHORT, "Enable mention recovery")
            .define(TOPIC, Type.STRING, "mentions.recovered", new ConfigDef.NonEmptyString(), Importance.MEDIUM,
                "Topic the recovered routing decisions are written to; keyed by the agent account id.",
                GROUP, ++order, Width.MEDIUM, "Recovered mentions topic")
            .define(BATCH_SIZE, Type.INT, 200, Range.between(1, 10_000), Importance.LOW,
                "Unrouted messages read per batch. One batch is in flight at a time; the next is read only "
                    + "after every record of the previous one was acknowledged or failed. A batch also stops at the "
                    + "message whose records would take it past 10,000 (an @all in a channel of many agents): the "
                    + "rest is read with the next batch.",
                GROUP, ++order, Width.SHORT, "Batch size")
            .define(MIN_AGE_MS, Type.LONG, 30_000L, Range.atLeast(0), Importance.LOW,
                "The periodic scan only looks at messages older than this (by at_unix_ms), so the chat "
                    + "server's live pass has had its chance first. Scans at start and on NOTIFY ignore it.",
                GROUP, ++order, Width.SHORT, "Minimum message age (ms)")
            .define(SCAN_INTERVAL_MS, Type.LONG, 60_000L, Range.atLeast(100), Importance.LOW,
                "How often the periodic scan runs; it also covers a NOTIFY lost while the listener reconnects.",
                GROUP, ++order, Width.SHORT, "Scan interval (ms)")
            .define(SESSION_LIVE_MS, Type.LONG, 60_000L, Range.atLeast(1), Importance.LOW,
                "An agent session counts as live when ended_at_unix_ms is NULL and last_seen_unix_ms is "
                    + "within this many ms. Live members get STEER; a message held by a live session is skipped.",
                GROUP, ++order, Width.SHORT, "Session liveness window (ms)")
            .define(NOTIFY_CHANNEL, Type.STRING, "mentions_recovery", new ChannelNameValidator(), Importance.LOW,
                "LISTEN channel that triggers a scan (the server sends NOTIFY at its own recovery points). "
                    + "A lower-case SQL identifier; empty disables LISTEN (e.g. behind PgBouncer in "
                    + "transaction mode), leaving the start and periodic scans.",
                GROUP, ++order, Width.MEDIUM, "NOTIFY channel");
    }

    public boolean enabled() {
        return getBoolean(ENABLED);
    }

    public String topic() {
        return getString(TOPIC);
    }

    public int batchSize() {
        return getInt(BATCH_SIZE);
    }

    public Duration minAge() {
        return Duration.ofMillis(getLong(MIN_AGE_MS));
    }

    public Duration scanInterval() {
        return Duration.ofMillis(getLong(SCAN_INTERVAL_MS));
    }

    public Duration sessionLive() {
        return Duration.ofMillis(getLong(SESSION_LIVE_MS));
    }

    /** The LISTEN channel, or empty when LISTEN is disabled. */
    public Optional<String> notifyChannel() {
        String channel = getString(NOTIFY_CHANNEL);
        return channel == null || channel.isEmpty() ? Optional.empty() : Optional.of(channel);
    }

    /** The connector's name. */
    public String connectorName() {
        return TaskIdentityKeys.connectorName(this);
    }

    /** The task's number as text, or {@code whenUnset} for a task started without one. */
    public String taskId(String whenUnset) {
        return TaskIdentityKeys.taskId(this, whenUnset);
    }

    public ConnectionSettings connectionSettings() {
        return ConnectionConfigKeys.settings(this, APPLICATION_NAME);
    }

    /** A connector-level key this config does not define (e.g. {@code errors.tolerance}), or null. */
    public String connectorSetting(String key) {
        return originalsStrings().get(key);
    }

    /**
     * Accepts an empty value or an unquoted lower-case identifier, which LISTEN and the server's
     * {@code NOTIFY name} / {@code pg_notify('name', …)} spell the same way.
     */
    static final class ChannelNameValidator implements ConfigDef.Validator {
        private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_$]{0,62}");

        @Override
        public void ensureValid(String name, Object value) {
            String s = (String) value;
            if (s != null && !s.isEmpty() && !IDENTIFIER.matcher(s).matches()) {
                throw new ConfigException(name, value,
                    "must be empty or a lower-case identifier of at most 63 characters ([a-z_][a-z0-9_$]*)");
            }
        }

        @Override
        public String toString() {
            return "empty, or [a-z_][a-z0-9_$]* (at most 63 characters)";
        }
    }
}
