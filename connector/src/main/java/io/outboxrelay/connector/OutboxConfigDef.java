package io.outboxrelay.connector;

import static io.outboxrelay.connector.OutboxSourceConnectorConfig.*;

import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.connector.ConfigValidators.ChannelValidator;
import io.outboxrelay.connector.ConfigValidators.ChoiceValidator;
import io.outboxrelay.connector.ConfigValidators.ColumnValidator;
import io.outboxrelay.connector.ConfigValidators.GlobListValidator;
import io.outboxrelay.connector.ConfigValidators.OptionalTopicValidator;
import io.outboxrelay.connector.ConfigValidators.SubscriptionNamesValidator;
import io.outboxrelay.connector.ConfigValidators.TableNameValidator;
import io.outboxrelay.connector.ConfigValidators.TopicValidator;
import io.outboxrelay.connector.ConfigValidators.UriReferenceValidator;
import io.outboxrelay.mentions.MentionRecoveryConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;

/**
 * The definition of every key of {@link OutboxSourceConnectorConfig}: what Connect shows in validation
 * replies and the reference in docs/configuration.md. The per-subscription keys depend on the
 * {@code subscriptions} list, so {@link #forProps} builds the definition for a given set of properties.
 */
final class OutboxConfigDef {
    static final String OUTBOX_GROUP = "Outbox";
    static final String SUBSCRIPTIONS_GROUP = "Subscriptions";
    static final String RECORD_GROUP = "Record shape";
    static final String COLUMNS_GROUP = "Table columns";

    private OutboxConfigDef() {
    }

    static ConfigDef base() {
        ConfigDef def = ConnectionConfigKeys.addTo(new ConfigDef());
        addOutboxKeys(def);
        addColumnKeys(def);
        addSubscriptionListKey(def);
        addRecordShapeKeys(def);
        return MentionRecoveryConfig.addTo(def);
    }

    /** The base keys plus topic, event.types and coalesce for every name in {@code subscriptions}. */
    static ConfigDef forProps(Map<String, String> props) {
        ConfigDef def = base();
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
                        + " any run of characters (dots included) and ? exactly one, e.g. supplier.*,note.created,"
                        + " order.v?.paid. A match costs at most the type's length times the glob's, whatever the type.",
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
            .define(BATCH_MAX_BYTES, Type.INT, DEFAULT_BATCH_MAX_BYTES, Range.atLeast(1_024), Importance.LOW,
                "The most bytes one claim reads: a row counts its id, type, subject, payload and headers as text, and a"
                    + " claim stops before the row that would pass this (its first row is claimed alone when larger;"
                    + " a row larger than outbox.max.record.bytes is poisoned without being read). With the rows"
                    + " limits above, this bounds a task's memory: it claims only while its rows in flight take less"
                    + " than outbox.max.inflight.batches x this, so it holds at most outbox.max.inflight.batches + 1"
                    + " times this (or of outbox.max.record.bytes, when larger) of row text.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Max batch bytes")
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
                "Periodic claim in every state, behind the looks of quiet tasks (which claim every 250 ms, or every"
                    + " outbox.poll.interval.ms while they poll): the"
                    + " last line for leases that expired and notifications lost; a task without a usable wake-up flag"
                    + " also looks for one at each sweep.", OUTBOX_GROUP, ++order, Width.SHORT, "Sweep interval (ms)")
            .define(POLL_INTERVAL_MS, Type.LONG, 1_000L, Range.atLeast(10), Importance.LOW,
                "Claim interval of a quiet task when outbox.listen.enabled=false, or when the role may not use the"
                    + " table's wake-up flag (docs/wakeup.md).", OUTBOX_GROUP, ++order, Width.SHORT,
                "Poll interval (ms)")
            .define(REPLAY_CHECK_INTERVAL_MS, Type.LONG, 5_000L, Range.atLeast(0), Importance.LOW,
                "How often a relay task that serves no replay request looks for one in <table>_replays (SELECT"
                    + " events_replay(subscription, from, to); docs/replay.md). A task that serves one sends its next"
                    + " chunk of outbox.batch.size rows as soon as the last is acknowledged. 0 turns replay off.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Replay check interval (ms)")
            .define(LINGER_MS, Type.LONG, DEFAULT_LINGER_MS, Range.between(0, 1_000), Importance.LOW,
                "While rows keep arriving, a relay task claims every this many milliseconds (further apart, up to"
                    + " outbox.linger.max.ms, while each claim brings fewer than twelve rows), and the stamps of the rows"
                    + " acknowledged meanwhile go with that claim. The relay's statements per second, not per commit,"
                    + " are what this bounds: larger costs the database less, smaller adds less latency. Once claims"
                    + " find nothing the task waits for a NOTIFY instead, and looks (arms the wake-up flag and claims) at"
                    + " once after a spell with rows, then a linger later, the gap doubling up to 250 ms"
                    + " (docs/wakeup.md). 0 is read as 1.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Linger (ms)")
            .define(LINGER_MAX_MS, Type.LONG, DEFAULT_LINGER_MAX_MS, Range.between(0, 10_000), Importance.LOW,
                "While rows keep arriving at a rate that brings fewer than twelve in outbox.linger.ms, a relay task"
                    + " spaces its claims out, up to this many milliseconds apart, so that each claim brings about twelve:"
                    + " a claim costs the database, the worker and the broker about the same whatever it carries. It is"
                    + " the longest a row committed while the relay is busy waits for its claim. At or below"
                    + " outbox.linger.ms, and with outbox.ordering=strict (a claim takes one row per subject there),"
                    + " the task claims every outbox.linger.ms whatever the rate (docs/wakeup.md).",
                OUTBOX_GROUP, ++order, Width.SHORT, "Linger max (ms)")
            .define(FANNED_CHANNEL, Type.STRING, "outbox_events_fanned", new ChannelValidator(true), Importance.LOW,
                "After a stamp commits, the fanned event ids are NOTIFYed on this channel (write receipts). Empty"
                    + " disables receipts. Not outbox.notify.channel, which validation refuses: every receipt would"
                    + " wake every waiting relay task.", OUTBOX_GROUP, ++order, Width.MEDIUM, "Receipt channel")
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
            .define(TIMESTAMP_MAX_AHEAD_MS, Type.LONG, DEFAULT_TIMESTAMP_MAX_AHEAD_MS, Range.atLeast(0), Importance.LOW,
                "A record's timestamp is its row's occurred_at, except where Kafka would refuse it: when occurred_at"
                    + " is more than this ahead of the worker's clock (a Kafka 4 broker rejects timestamps more than"
                    + " log.message.timestamp.after.max.ms ahead, 1 h by default) or before 1970 (Connect refuses"
                    + " negative timestamps), the record carries the time it was made instead. The envelope's"
                    + " occurred_at and the event.occurred_at header always keep the row's value. Keep it below the"
                    + " topics' message.timestamp.after.max.ms. A row whose occurred_at is infinite is poisoned.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Max timestamp ahead (ms)")
            .define(MAX_INFLIGHT_BATCHES, Type.INT, 4, Range.between(1, 64), Importance.LOW,
                "Claimed batches a task may have in flight (sent, not yet acknowledged and stamped).",
                OUTBOX_GROUP, ++order, Width.SHORT, "Max in-flight batches")
            .define(RETENTION_MS, Type.LONG, 0L, Range.atLeast(0), Importance.LOW,
                "When above 0, fanned rows whose fanned_out_at is older than this are deleted, in batches of 1000"
                    + " that skip locked rows, by relay task 0. Poisoned and un-fanned rows are never deleted. Needs"
                    + " DELETE on the table. On a table partitioned by day (schemas/sql/outbox.sql -v partitioned=daily)"
                    + " whole day partitions are dropped instead, once their day ended this long ago and they hold no"
                    + " pending or poisoned row (docs/partitioned-outbox.md); needs EXECUTE on"
                    + " <table>_drop_partitions(timestamptz). 0 (the default) keeps every row.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Retention (ms)")
            .define(RETENTION_INTERVAL_MS, Type.LONG, 60_000L, Range.atLeast(100), Importance.LOW,
                "How often retention looks for rows to delete (it continues at once while batches come back full).",
                OUTBOX_GROUP, ++order, Width.SHORT, "Retention interval (ms)")
            .define(ORDERING, Type.STRING, StrictOrder.BEST_EFFORT, new ChoiceValidator(StrictOrder.CHOICES),
                Importance.MEDIUM,
                "best-effort: a subject's rows go out in seq order while nothing fails; a row that fails is retried"
                    + " alone after a backoff while the later rows of its subject go out. strict: a row is claimed only"
                    + " when no earlier row of its subject is still pending (backing off, leased or in flight), so a"
                    + " subscriber sees a subject's events in seq order across failures; a poisoned row releases its"
                    + " subject (logged, metric strict-subjects-released). Needs the subject index of migration V7;"
                    + " a subject moves one row per claim, so a drain of few subjects with many rows each is slower"
                    + " (docs/ordering.md). Every connector on a table must use the same ordering.",
                OUTBOX_GROUP, ++order, Width.SHORT, "Ordering");
    }

    private static void addColumnKeys(ConfigDef def) {
        // the state columns (seq, fanned_out_at, ...) are not mappable; docs/adopting-a-table.md
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
                    + " schemas.enable=false, which then writes a JSON object (numbers become a long or a double; a"
                    + " payload that is not exactly one JSON value, or holds a number beyond a double's range, is"
                    + " poisoned). With"
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
}
