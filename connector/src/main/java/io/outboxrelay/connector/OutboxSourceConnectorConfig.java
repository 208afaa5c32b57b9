package io.outboxrelay.connector;

import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.Identifiers;
import io.outboxrelay.mentions.MentionRecoveryConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;

/**
 * Configuration of {@link OutboxSourceConnector}: the {@code connection.*}, {@code outbox.*},
 * {@code subscriptions} / {@code subscription.<name>.*} and {@code mentions.*} keys of the contract.
 * The per-subscription keys depend on the {@code subscriptions} list, so {@link #configDef(Map)}
 * builds the definition for a given set of properties.
 */
public class OutboxSourceConnectorConfig extends AbstractConfig {
    static final String OUTBOX_GROUP = "Outbox";
    static final String SUBSCRIPTIONS_GROUP = "Subscriptions";
    static final String RECORD_GROUP = "Record shape";
    static final String COLUMNS_GROUP = "Table columns";

    public static final String TABLE = "outbox.table";
    public static final String BATCH_SIZE = "outbox.batch.size";
    public static final String BATCH_MAX_SIZE = "outbox.batch.max.size";
    public static final String LEASE_MS = "outbox.lease.ms";
    public static final String MAX_ATTEMPTS = "outbox.max.attempts";
    public static final String BACKOFF_INITIAL_MS = "outbox.backoff.initial.ms";
    public static final String BACKOFF_MAX_MS = "outbox.backoff.max.ms";
    public static final String LISTEN_ENABLED = "outbox.listen.enabled";
    public static final String NOTIFY_CHANNEL = "outbox.notify.channel";
    public static final String SWEEP_INTERVAL_MS = "outbox.sweep.interval.ms";
    public static final String POLL_INTERVAL_MS = "outbox.poll.interval.ms";
    public static final String LINGER_MS = "outbox.linger.ms";
    public static final String FANNED_CHANNEL = "outbox.fanned.channel";
    public static final String POISON_TOPIC = "outbox.poison.topic";
    public static final String MAX_RECORD_BYTES = "outbox.max.record.bytes";
    public static final String MAX_INFLIGHT_BATCHES = "outbox.max.inflight.batches";
    public static final String RETENTION_MS = "outbox.retention.ms";
    public static final String RETENTION_INTERVAL_MS = "outbox.retention.interval.ms";
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

    private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");

    /** The keys every config has, without the per-subscription ones. */
    public static final ConfigDef BASE_CONFIG_DEF = baseConfigDef();

    private final List<Subscription> subscriptions;
    private final RecordShape recordShape;

    public OutboxSourceConnectorConfig(Map<String, String> props) {
        super(configDef(props), props);
        this.subscriptions = parseSubscriptions();
        this.recordShape = parseRecordShape();
    }

    static ConfigDef baseConfigDef() {
        ConfigDef def = ConnectionConfigKeys.addTo(new ConfigDef());
        addOutboxKeys(def);
        addColumnKeys(def);
        addSubscriptionListKey(def);
        addRecordShapeKeys(def);
        return MentionRecoveryConfig.addTo(def);
    }

    /** The base keys plus topic, event.types and coalesce for every name in {@code subscriptions}. */
    public static ConfigDef configDef(Map<String, String> props) {
        ConfigDef def = baseConfigDef();
        int order = 1;
        for (String name : subscriptionNames(props)) {
            if (!Subscription.NAME.matcher(name).matches()) {
                continue; // reported by the validator of the subscriptions key
            }
            String prefix = SUBSCRIPTION_PREFIX + name;
            def.define(prefix + TOPIC_SUFFIX, Type.STRING, name, new TopicValidator(), Importance.HIGH,
                    "Topic that subscription '" + name + "' receives its records on. Defaults to the subscription name.",
                    SUBSCRIPTIONS_GROUP, ++order, Width.MEDIUM, name + ": topic")
                .define(prefix + EVENT_TYPES_SUFFIX, Type.LIST, "*", new GlobListValidator(), Importance.HIGH,
                    "Event types subscription '" + name + "' receives: a comma-separated list of globs, where * matches"
                        + " any characters, e.g. supplier.*,note.created.",
                    SUBSCRIPTIONS_GROUP, ++order, Width.LONG, name + ": event types")
                .define(prefix + COALESCE_SUFFIX, Type.BOOLEAN, false, Importance.MEDIUM,
                    "When true, subscription '" + name + "' gets one record per subject within a claimed batch, for the"
                        + " latest event (the highest seq); the record's coalesced_seqs lists the events it covers. Only for consumers"
                        + " that re-read current state; leave false when every event is a fact of its own.",
                    SUBSCRIPTIONS_GROUP, ++order, Width.SHORT, name + ": coalesce");
        }
        return def;
    }

    private static void addOutboxKeys(ConfigDef def) {
        int order = 0;
        def.define(TABLE, Type.STRING, "events", new TableNameValidator(), Importance.HIGH,
                "Outbox table, optionally schema-qualified (app.events). Quoted as an identifier, never spliced.",
                OUTBOX_GROUP, ++order, Width.MEDIUM, "Outbox table")
            .define(BATCH_SIZE, Type.INT, 200, Range.between(1, 10_000), Importance.MEDIUM,
                "Rows claimed per claim statement while the relay is not busy: the floor of the claim size. A"
                    + " claim that comes back full doubles the next one, up to outbox.batch.max.size; a short one"
                    + " halves it, down to this.", OUTBOX_GROUP, ++order, Width.SHORT, "Batch size")
            .define(BATCH_MAX_SIZE, Type.INT, 1_000, Range.between(1, 10_000), Importance.LOW,
                "The largest claim a busy task makes (claims grow while they come back full). A task holds at"
                    + " most outbox.batch.max.size x (outbox.max.inflight.batches + 1) rows. A value below"
                    + " outbox.batch.size keeps every claim at outbox.batch.size.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Max batch size")
            .define(LEASE_MS, Type.LONG, 60_000L, Range.atLeast(1_000), Importance.MEDIUM,
                "How long a claimed row stays reserved for the claiming task. A row whose lease expires (its task"
                    + " died) is claimed again by any task; leases of rows still in flight are extended.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Lease (ms)")
            .define(MAX_ATTEMPTS, Type.INT, 5, Range.atLeast(1), Importance.MEDIUM,
                "Claims after which a row that was never fanned out is poisoned (poisoned_at, last_error) and left"
                    + " out of every claim until SELECT events_requeue(seq).",
                OUTBOX_GROUP, ++order, Width.SHORT, "Max attempts")
            .define(BACKOFF_INITIAL_MS, Type.LONG, 2_000L, Range.atLeast(0), Importance.LOW,
                "First backoff after a failing pass; doubles on every further failure.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Initial backoff (ms)")
            .define(BACKOFF_MAX_MS, Type.LONG, 60_000L, Range.atLeast(0), Importance.LOW,
                "Cap of the doubling backoff.", OUTBOX_GROUP, ++order, Width.SHORT, "Max backoff (ms)")
            .define(LISTEN_ENABLED, Type.BOOLEAN, true, Importance.MEDIUM,
                "Wake up on LISTEN/NOTIFY. Set false behind PgBouncer in transaction mode; the task then polls"
                    + " every outbox.poll.interval.ms.", OUTBOX_GROUP, ++order, Width.SHORT, "LISTEN enabled")
            .define(NOTIFY_CHANNEL, Type.STRING, "outbox_events", new ChannelValidator(false), Importance.LOW,
                "Channel the outbox trigger NOTIFYs on, on an insert while a relay task waits (the table's"
                    + " <table>_wakeup flag is armed).", OUTBOX_GROUP, ++order, Width.MEDIUM, "Notify channel")
            .define(SWEEP_INTERVAL_MS, Type.LONG, 60_000L, Range.atLeast(100), Importance.LOW,
                "Periodic claim that covers notifications lost while the listener reconnected, and leases that"
                    + " expired.", OUTBOX_GROUP, ++order, Width.SHORT, "Sweep interval (ms)")
            .define(POLL_INTERVAL_MS, Type.LONG, 1_000L, Range.atLeast(10), Importance.LOW,
                "Claim interval when outbox.listen.enabled=false.", OUTBOX_GROUP, ++order, Width.SHORT,
                "Poll interval (ms)")
            .define(LINGER_MS, Type.LONG, 0L, Range.between(0, 1_000), Importance.LOW,
                "While rows keep arriving (the last claim found some, but fewer than it asked for), the next claim"
                    + " waits this long instead of arming the table's wake-up flag: claims take more rows at once and"
                    + " writers send no NOTIFY while the relay is busy, for up to this much latency. 0 claims again"
                    + " at the next NOTIFY. Applies with outbox.listen.enabled=true on a table with the wake-up flag.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Linger (ms)")
            .define(FANNED_CHANNEL, Type.STRING, "outbox_events_fanned", new ChannelValidator(true), Importance.LOW,
                "After a stamp commits, the fanned event ids are NOTIFYed on this channel (write receipts). Empty"
                    + " disables receipts.", OUTBOX_GROUP, ++order, Width.MEDIUM, "Receipt channel")
            .define(POISON_TOPIC, Type.STRING, "", new OptionalTopicValidator(), Importance.LOW,
                "When set, one record describing each poisoned row is published to this topic.",
                OUTBOX_GROUP, ++order, Width.MEDIUM, "Poison topic")
            .define(MAX_RECORD_BYTES, Type.INT, DEFAULT_MAX_RECORD_BYTES, Range.atLeast(1_024), Importance.LOW,
                "A row whose record would exceed this many bytes once converted is poisoned before it is produced,"
                    + " so an oversized row cannot fail the task. The size is estimated as JsonConverter writes the"
                    + " record: the payload as an escaped JSON string (a quote or backslash counts twice), the"
                    + " value's schema (about 1 KB), key and headers. Keep it below the producer's"
                    + " max.request.size.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Max record bytes")
            .define(MAX_INFLIGHT_BATCHES, Type.INT, 4, Range.between(1, 64), Importance.LOW,
                "Claimed batches a task may have in flight (sent, not yet acknowledged and stamped).",
                OUTBOX_GROUP, ++order, Width.SHORT, "Max in-flight batches")
            .define(RETENTION_MS, Type.LONG, 0L, Range.atLeast(0), Importance.LOW,
                "When above 0, fanned rows whose fanned_out_at is older than this are deleted, in batches of 1000"
                    + " that skip locked rows, by relay task 0. Poisoned and un-fanned rows are never deleted. Needs"
                    + " DELETE on the table. 0 (the default) keeps every row.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Retention (ms)")
            .define(RETENTION_INTERVAL_MS, Type.LONG, 60_000L, Range.atLeast(100), Importance.LOW,
                "How often retention looks for rows to delete (it continues at once while batches come back full).",
                OUTBOX_GROUP, ++order, Width.SHORT, "Retention interval (ms)");
    }

    private static void addColumnKeys(ConfigDef def) {
        // the state columns (seq, fanned_out_at, ...) are not mappable; README "Adopting an existing outbox table"
        String asWritten = " A column name as written (quoted, not case-folded).";
        Map<String, String> docs = new java.util.LinkedHashMap<>();
        docs.put("id", "Column of the event's id: the event.id header, ce_id and the envelope's id; read as text,"
            + " so uuid, text or any other type works.");
        docs.put("type", "Column of the event type, which subscription.<name>.event.types match. Debezium's table:"
            + " type.");
        docs.put("subject", "Column of the event's subject: the record key, what per-subject order and the split of"
            + " subjects over tasks follow. Debezium's table: aggregateid.");
        docs.put("payload", "Column of the payload, read as its text: jsonb, json, text or varchar (validation refuses"
            + " bytea). A NULL payload is the JSON null.");
        docs.put("headers", "jsonb (or json) column whose object of header names to values is copied onto every record."
            + " Empty for none: the records then carry only the relay's own headers (Debezium's table has none).");
        docs.put("occurred_at", "NOT NULL timestamptz column of when the event occurred: the record timestamp and"
            + " event.occurred_at. outbox-adopt-existing.sql adds occurred_at DEFAULT now() to a table without one.");
        int order = 0;
        for (Map.Entry<String, String> field : docs.entrySet()) {
            String name = field.getKey();
            String defaultColumn = OutboxColumns.DEFAULT.byField().get(name);
            def.define(COLUMN_PREFIX + name, Type.STRING, defaultColumn, new ColumnValidator(name.equals("headers")),
                Importance.LOW, field.getValue() + asWritten, COLUMNS_GROUP, ++order, Width.MEDIUM,
                "Column: " + name);
        }
    }

    private static void addRecordShapeKeys(ConfigDef def) {
        int order = 0;
        def.define(VALUE_FORMAT, Type.STRING, RecordShape.ValueFormat.ENVELOPE.configName,
                new ChoiceValidator(RecordShape.ValueFormat.configNames()), Importance.MEDIUM,
                "What a record's value is. envelope: the io.outboxrelay.OutboxEvent struct (id, seq, type, subject,"
                    + " occurred_at, subscription, payload as an escaped JSON string, coalesced_seqs); works with"
                    + " JsonConverter and Avro. payload: the payload's JSON text (schema: optional string); with"
                    + " StringConverter the value is exactly the text the claim read (payload::text). payload.bytes:"
                    + " the same text as UTF-8 bytes (schema: optional bytes), for ByteArrayConverter. payload.json:"
                    + " the payload parsed into schemaless maps and lists, for JsonConverter with"
                    + " schemas.enable=false, which then writes a JSON object (numbers become a long or a double). With"
                    + " every payload format the event's metadata travels in headers: event.id, event.type,"
                    + " subscription, event.seq, event.subject, event.occurred_at (ISO-8601) and, on a coalesced"
                    + " record, event.coalesced_seqs (comma-separated).",
                RECORD_GROUP, ++order, Width.SHORT, "Value format")
            .define(HEADERS_FORMAT, Type.STRING, "plain", new ChoiceValidator(List.of("plain", "cloudevents")),
                Importance.LOW,
                "plain: the relay's own headers only. cloudevents: also the CloudEvents Kafka protocol binding's"
                    + " binary-mode headers ce_specversion (1.0), ce_id, ce_type, ce_source (cloudevents.source),"
                    + " ce_time (RFC 3339) and ce_subject, plus content-type: application/json with a payload value"
                    + " format. Keep the worker's SimpleHeaderConverter so header values are written as plain text.",
                RECORD_GROUP, ++order, Width.SHORT, "Headers format")
            .define(CLOUDEVENTS_SOURCE, Type.STRING, "", new UriReferenceValidator(), Importance.LOW,
                "The ce_source of every record, a URI-reference such as /outbox/orders or"
                    + " https://orders.example.com/outbox. Required when headers.format=cloudevents.",
                RECORD_GROUP, ++order, Width.MEDIUM, "CloudEvents source");
    }

    private static void addSubscriptionListKey(ConfigDef def) {
        def.define(SUBSCRIPTIONS, Type.LIST, ConfigDef.NO_DEFAULT_VALUE, new SubscriptionNamesValidator(),
            Importance.HIGH,
            "Subscriber names, e.g. corpus.index,webhooks,mail. Each gets one record per matching event on"
                + " subscription.<name>.topic.", SUBSCRIPTIONS_GROUP, 1, Width.LONG, "Subscriptions");
    }

    static List<String> subscriptionNames(Map<String, String> props) {
        String raw = props.get(SUBSCRIPTIONS);
        List<String> names = new ArrayList<>();
        if (raw != null) {
            for (String part : raw.split(",")) {
                if (!part.isBlank()) {
                    names.add(part.trim());
                }
            }
        }
        return names;
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

    public long lingerMs() {
        return getLong(LINGER_MS);
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
        Object v = originals().get("errors.tolerance");
        return v != null && "all".equalsIgnoreCase(v.toString().trim());
    }

    static final class TopicValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            String topic = (String) value;
            if (topic == null || !TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
                throw new ConfigException(name, value,
                    "a Kafka topic name is 1-249 characters of letters, digits, '.', '_' and '-' (and not '.' or '..')");
            }
        }

        @Override
        public String toString() {
            return "Kafka topic name";
        }
    }

    static final class OptionalTopicValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            if (value != null && !((String) value).isEmpty()) {
                new TopicValidator().ensureValid(name, value);
            }
        }

        @Override
        public String toString() {
            return "empty, or a Kafka topic name";
        }
    }

    static final class GlobListValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            @SuppressWarnings("unchecked")
            List<String> globs = (List<String>) value;
            if (globs == null || globs.isEmpty()) {
                throw new ConfigException(name, value, "list at least one event type glob, or * for every type");
            }
            for (String glob : globs) {
                if (!Subscription.GLOB.matcher(glob).matches()) {
                    throw new ConfigException(name, value, "'" + glob + "' is not an event type glob: use letters,"
                        + " digits and . _ : / - with * (any characters) and ? (one character), e.g. supplier.*");
                }
            }
        }

        @Override
        public String toString() {
            return "comma-separated globs, e.g. supplier.*,note.created";
        }
    }

    static final class SubscriptionNamesValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            @SuppressWarnings("unchecked")
            List<String> names = (List<String>) value;
            if (names == null || names.isEmpty()) {
                throw new ConfigException(name, value, "name at least one subscription, e.g. webhooks,mail");
            }
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (String n : names) {
                if (!Subscription.NAME.matcher(n).matches()) {
                    throw new ConfigException(name, value, "subscription name '" + n
                        + "' may only contain letters, digits, '.', '_' and '-'");
                }
                if (!seen.add(n)) {
                    throw new ConfigException(name, value, "subscription '" + n + "' is listed twice");
                }
            }
        }

        @Override
        public String toString() {
            return "comma-separated names of letters, digits, '.', '_', '-'";
        }
    }

    static final class ChoiceValidator implements ConfigDef.Validator {
        private final List<String> choices;

        ChoiceValidator(List<String> choices) {
            this.choices = choices;
        }

        @Override
        public void ensureValid(String name, Object value) {
            if (value == null || !choices.contains(((String) value).trim().toLowerCase(java.util.Locale.ROOT))) {
                throw new ConfigException(name, value, "one of " + String.join(", ", choices));
            }
        }

        @Override
        public String toString() {
            return String.join(", ", choices);
        }
    }

    static final class UriReferenceValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            String v = value == null ? "" : ((String) value).trim();
            if (v.isEmpty()) {
                return;
            }
            try {
                new java.net.URI(v);
            } catch (java.net.URISyntaxException e) {
                throw new ConfigException(name, value, "not a URI-reference (RFC 3986): " + e.getReason()
                    + "; e.g. /outbox/orders or https://orders.example.com/outbox");
            }
        }

        @Override
        public String toString() {
            return "empty, or a URI-reference";
        }
    }

    static final class TableNameValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            try {
                Identifiers.split((String) value);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(name, value, e.getMessage());
            }
        }

        @Override
        public String toString() {
            return "table or schema.table";
        }
    }

    static final class ColumnValidator implements ConfigDef.Validator {
        private final boolean emptyAllowed;

        ColumnValidator(boolean emptyAllowed) {
            this.emptyAllowed = emptyAllowed;
        }

        @Override
        public void ensureValid(String name, Object value) {
            String v = (String) value;
            if (v != null && v.isEmpty() && emptyAllowed) {
                return;
            }
            if (v == null || v.isEmpty()) {
                throw new ConfigException(name, value, "name the table's column for this field");
            }
            if (v.indexOf('\0') >= 0) {
                throw new ConfigException(name, value, "a column name cannot contain NUL");
            }
            if (v.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 63) {
                throw new ConfigException(name, value, "PostgreSQL keeps only the first 63 bytes of a column name");
            }
            if (OutboxColumns.STATE_COLUMNS.contains(v)) {
                throw new ConfigException(name, value, v + " is one of the relay's own state columns "
                    + OutboxColumns.STATE_COLUMNS + ", which an event field cannot share");
            }
        }

        @Override
        public String toString() {
            return emptyAllowed ? "empty (no such column), or a column name" : "column name";
        }
    }

    static final class ChannelValidator implements ConfigDef.Validator {
        private static final Pattern CHANNEL = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
        private final boolean emptyAllowed;

        ChannelValidator(boolean emptyAllowed) {
            this.emptyAllowed = emptyAllowed;
        }

        @Override
        public void ensureValid(String name, Object value) {
            String v = (String) value;
            if (v != null && v.isEmpty() && emptyAllowed) {
                return;
            }
            if (v == null || !CHANNEL.matcher(v).matches()) {
                throw new ConfigException(name, value,
                    "a NOTIFY channel is a plain identifier: a letter or '_', then letters, digits or '_'");
            }
        }

        @Override
        public String toString() {
            return emptyAllowed ? "empty, or a channel identifier" : "channel identifier";
        }
    }
}
