package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import io.outboxrelay.mentions.MentionRecoveryConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/**
 * Configuration of {@link OutboxSourceConnector}: the {@code connection.*}, {@code outbox.*},
 * {@code subscriptions} / {@code subscription.<name>.*} and {@code mentions.*} keys of the contract.
 * The per-subscription keys depend on the {@code subscriptions} list, so {@link #configDef(Map)}
 * builds the definition for a given set of properties.
 */
public class OutboxSourceConnectorConfig extends AbstractConfig {

    public static final String TABLE = "outbox.table";
    public static final String BATCH_SIZE = "outbox.batch.size";
    public static final String BATCH_MAX_SIZE = "outbox.batch.max.size";
    public static final String BATCH_MAX_BYTES = "outbox.batch.max.bytes";
    public static final String LEASE_MS = "outbox.lease.ms";
    public static final String MAX_ATTEMPTS = "outbox.max.attempts";
    public static final String BACKOFF_INITIAL_MS = "outbox.backoff.initial.ms";
    public static final String BACKOFF_MAX_MS = "outbox.backoff.max.ms";
    public static final String LISTEN_ENABLED = "outbox.listen.enabled";
    public static final String NOTIFY_CHANNEL = "outbox.notify.channel";
    public static final String SWEEP_INTERVAL_MS = "outbox.sweep.interval.ms";
    public static final String POLL_INTERVAL_MS = "outbox.poll.interval.ms";
    public static final String REPLAY_CHECK_INTERVAL_MS = "outbox.replay.check.interval.ms";
    public static final String LINGER_MS = "outbox.linger.ms";
    public static final String LINGER_MAX_MS = "outbox.linger.max.ms";
    public static final String FANNED_CHANNEL = "outbox.fanned.channel";
    public static final String POISON_TOPIC = "outbox.poison.topic";
    public static final String MAX_RECORD_BYTES = "outbox.max.record.bytes";
    public static final String TIMESTAMP_MAX_AHEAD_MS = "outbox.timestamp.max.ahead.ms";
    public static final String MAX_INFLIGHT_BATCHES = "outbox.max.inflight.batches";
    public static final String RETENTION_MS = "outbox.retention.ms";
    public static final String RETENTION_INTERVAL_MS = "outbox.retention.interval.ms";
    public static final String ORDERING = "outbox.ordering";
    /** outbox.column.id, .type, .subject, .payload, .headers, .occurred_at: see {@link OutboxColumns}. */
    public static final String COLUMN_PREFIX = "outbox.column.";
    public static final String VALUE_FORMAT = "value.format";
    public static final String HEADERS_FORMAT = "headers.format";
    public static final String CLOUDEVENTS_SOURCE = "cloudevents.source";
    public static final String SUBSCRIPTIONS = "subscriptions";
    public static final String SUBSCRIPTION_PREFIX = "subscription.";
    public static final String TOPIC_SUFFIX = ".topic";
    public static final String EVENT_TYPES_SUFFIX = ".event.types";
    public static final String COALESCE_SUFFIX = ".coalesce";

    /** Producer max.request.size default is 1 MiB; leave room for key, headers and the envelope. */
    public static final int DEFAULT_MAX_RECORD_BYTES = 1_000_000;

    /**
     * Between a busy task's claims: half of it is the latency a row waits on average while the relay is busy,
     * and two tasks make at most 2 x 1000 / it claims a second (docs/wakeup.md, bench/README.md "steady").
     */
    public static final long DEFAULT_LINGER_MS = 10;
    /**
     * Between a busy task's claims while each brings fewer than eight rows (below ~800 events/s per task at the
     * default linger): a claim costs the database, the worker and the broker about the same whatever it carries.
     */
    public static final long DEFAULT_LINGER_MAX_MS = 50;

    /** Eight rows of outbox.max.record.bytes, or tens of thousands of events of a few hundred bytes. */
    public static final int DEFAULT_BATCH_MAX_BYTES = 8 * 1024 * 1024;

    /** Well inside the 1 h a Kafka 4 broker accepts by default, and wide of a writer's clock skew. */
    public static final long DEFAULT_TIMESTAMP_MAX_AHEAD_MS = 300_000;

    /** The keys every config has, without the per-subscription ones. */
    public static final ConfigDef BASE_CONFIG_DEF = OutboxConfigDef.base();

    private final List<Subscription> subscriptions;
    private final RecordShape recordShape;

    public OutboxSourceConnectorConfig(Map<String, String> props) {
        super(configDef(props), props);
        this.subscriptions = parseSubscriptions();
        this.recordShape = parseRecordShape();
    }

    /** The base keys plus topic, event.types and coalesce for every name in {@code subscriptions}. */
    public static ConfigDef configDef(Map<String, String> props) {
        return OutboxConfigDef.forProps(props);
    }

    private List<Subscription> parseSubscriptions() {
        List<Subscription> out = new ArrayList<>();
        for (String name : getList(SUBSCRIPTIONS)) {
            String prefix = SUBSCRIPTION_PREFIX + name;
            out.add(new Subscription(name, getString(prefix + TOPIC_SUFFIX), getList(prefix + EVENT_TYPES_SUFFIX),
                getBoolean(prefix + COALESCE_SUFFIX)));
        }
        return List.copyOf(out);
    }

    public List<Subscription> subscriptions() {
        return subscriptions;
    }

    public String table() {
        return getString(TABLE);
    }

    public String quotedTable() {
        return Identifiers.quoteQualified(table());
    }

    public int batchSize() {
        return getInt(BATCH_SIZE);
    }

    public int batchMaxSize() {
        return getInt(BATCH_MAX_SIZE);
    }

    public int batchMaxBytes() {
        return getInt(BATCH_MAX_BYTES);
    }

    public Duration lease() {
        return Duration.ofMillis(getLong(LEASE_MS));
    }

    public int maxAttempts() {
        return getInt(MAX_ATTEMPTS);
    }

    public Duration backoffInitial() {
        return Duration.ofMillis(getLong(BACKOFF_INITIAL_MS));
    }

    public Duration backoffMax() {
        return Duration.ofMillis(getLong(BACKOFF_MAX_MS));
    }

    public boolean listenEnabled() {
        return getBoolean(LISTEN_ENABLED);
    }

    public String notifyChannel() {
        return getString(NOTIFY_CHANNEL);
    }

    public Duration sweepInterval() {
        return Duration.ofMillis(getLong(SWEEP_INTERVAL_MS));
    }

    public Duration pollInterval() {
        return Duration.ofMillis(getLong(POLL_INTERVAL_MS));
    }

    /** How often a task that serves no replay request looks for one; zero: replay is off (docs/replay.md). */
    public Duration replayCheckInterval() {
        return Duration.ofMillis(getLong(REPLAY_CHECK_INTERVAL_MS));
    }

    public long lingerMs() {
        return getLong(LINGER_MS);
    }

    /**
     * The longest pace of a busy task whose claims bring few rows; below {@link #lingerMs()}, that. Under strict
     * ordering always {@link #lingerMs()}: a claim takes one row per subject there, so few rows a claim say nothing
     * of the rate, and a hot subject would move at half its pace.
     */
    public long lingerMaxMs() {
        return strictOrdering() ? lingerMs() : Math.max(lingerMs(), getLong(LINGER_MAX_MS));
    }

    public String fannedChannel() {
        return getString(FANNED_CHANNEL);
    }

    public String poisonTopic() {
        return getString(POISON_TOPIC);
    }

    public int maxRecordBytes() {
        return getInt(MAX_RECORD_BYTES);
    }

    public long timestampMaxAheadMs() {
        return getLong(TIMESTAMP_MAX_AHEAD_MS);
    }

    public int maxInflightBatches() {
        return getInt(MAX_INFLIGHT_BATCHES);
    }

    public long retentionMs() {
        return getLong(RETENTION_MS);
    }

    public long retentionIntervalMs() {
        return getLong(RETENTION_INTERVAL_MS);
    }

    RecordShape recordShape() {
        return recordShape;
    }

    /** {@code outbox.ordering=strict}: a row is claimed only when it heads its subject's line (docs/ordering.md). */
    public boolean strictOrdering() {
        return StrictOrder.STRICT.equals(getString(ORDERING).trim().toLowerCase(Locale.ROOT));
    }

    /** The columns of the event's fields ({@code outbox.column.*}). */
    OutboxColumns columns() {
        return new OutboxColumns(column("id"), column("type"), column("subject"), column("payload"),
            column("headers"), column("occurred_at"));
    }

    private String column(String field) {
        return getString(COLUMN_PREFIX + field);
    }

    /** The record shape, or a ConfigException when headers.format=cloudevents has no cloudevents.source. */
    private RecordShape parseRecordShape() {
        boolean cloudEvents = "cloudevents".equalsIgnoreCase(getString(HEADERS_FORMAT).trim());
        String source = getString(CLOUDEVENTS_SOURCE).trim();
        if (cloudEvents && source.isEmpty()) {
            throw new ConfigException(CLOUDEVENTS_SOURCE, source, CLOUDEVENTS_SOURCE_REQUIRED);
        }
        return new RecordShape(RecordShape.ValueFormat.of(getString(VALUE_FORMAT)), cloudEvents, source);
    }

    static final String CLOUDEVENTS_SOURCE_REQUIRED = "headers.format=cloudevents needs the ce_source of the records:"
        + " set cloudevents.source to a URI-reference, e.g. /outbox/orders";

    public boolean mentionsEnabled() {
        return getBoolean(MentionRecoveryConfig.ENABLED);
    }

    /** Connect's own {@code errors.tolerance}; decides what a null commitRecord metadata means. */
    public boolean toleratesAllErrors() {
        return ExactlyOnceRules.toleratesAllErrors(originalsStrings());
    }
}
