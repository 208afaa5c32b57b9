package io.outboxrelay.connector;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns claimed rows into one record per (row, matching subscription): key {@code subject}, timestamp
 * {@code occurred_at} (the time the record is made when Kafka would refuse that: {@link #recordTimestamp}),
 * headers {@code event.id}, {@code event.type}, {@code subscription} plus the row's
 * own headers. The value is an {@code OutboxEvent} struct, or with a payload {@link RecordShape.ValueFormat}
 * the payload itself, the rest of the metadata then in headers. A coalescing subscription gets, per
 * subject within the batch, one record for the latest event that covers the earlier ones.
 */
final class OutboxRecordFactory {
    private static final Logger log = LoggerFactory.getLogger(OutboxRecordFactory.class);
    static final Schema KEY_SCHEMA = Schema.STRING_SCHEMA;
    static final Schema VALUE_SCHEMA = SchemaBuilder.struct()
        .name("io.outboxrelay.OutboxEvent")
        .version(1)
        .doc("One outbox event as delivered to one subscription.")
        .field("id", Schema.STRING_SCHEMA)
        .field("seq", Schema.INT64_SCHEMA)
        .field("type", Schema.STRING_SCHEMA)
        .field("subject", Schema.STRING_SCHEMA)
        .field("occurred_at", Timestamp.SCHEMA)
        .field("subscription", Schema.STRING_SCHEMA)
        .field("payload", Schema.STRING_SCHEMA)
        .field("coalesced_seqs", SchemaBuilder.array(Schema.INT64_SCHEMA).optional().build())
        .build();

    private final List<Subscription> subscriptions;
    private final RecordOffsets informational;
    private final RecordShape shape;
    private final Clock wallClock;
    private final long timestampMaxAheadMs;
    private boolean timestampReplacedLogged;

    OutboxRecordFactory(List<Subscription> subscriptions, String table) {
        this(subscriptions, table, RecordShape.ENVELOPE);
    }

    OutboxRecordFactory(List<Subscription> subscriptions, String table, RecordShape shape) {
        this(subscriptions, table, shape, Clock.systemUTC(), OutboxSourceConnectorConfig.DEFAULT_TIMESTAMP_MAX_AHEAD_MS);
    }

    /**
     * @param wallClock           the clock the broker's check of record timestamps is compared with
     * @param timestampMaxAheadMs {@code outbox.timestamp.max.ahead.ms}
     */
    OutboxRecordFactory(List<Subscription> subscriptions, String table, RecordShape shape, Clock wallClock,
                        long timestampMaxAheadMs) {
        this.subscriptions = subscriptions;
        this.informational = RecordOffsets.informational(table);
        this.shape = shape;
        this.wallClock = wallClock;
        this.timestampMaxAheadMs = timestampMaxAheadMs;
    }

    /**
     * The record timestamp of a row: its occurred_at, unless Kafka would refuse that. Connect fails the task
     * on a negative timestamp (before 1970; -1 means none) outside errors.tolerance, and a broker rejects one
     * more than {@code log.message.timestamp.after.max.ms} ahead of its clock (1 h by default) after the send.
     * Those rows' records carry {@code nowMs}, the time they are made; the event's own time stays in the
     * envelope and the event.occurred_at header. An infinite occurred_at never gets here (RejectionRules).
     */
    static long recordTimestamp(long occurredAtMs, long nowMs, long maxAheadMs) {
        return occurredAtMs < 0 || occurredAtMs - nowMs > maxAheadMs ? nowMs : occurredAtMs;
    }

    /** The row with one slot per subscription whose event types match; no slot when none does. */
    PendingRow pending(ClaimedRow row) {
        List<Subscription> matching = new ArrayList<>(subscriptions.size());
        for (Subscription s : subscriptions) {
            if (s.matches(row.type())) {
                matching.add(s);
            }
        }
        return new PendingRow(row, matching.toArray(new Subscription[0]));
    }

    /**
     * Records for a batch of rows, appended to {@code out} in seq order whatever the order of
     * {@code batch}: a claim lists rows attempted before ahead of fresh ones, and a requeued row is fresh
     * with a lower seq. So a subject's events reach each subscriber in seq order, and a coalescing
     * subscription gets the subject's highest seq, its latest event.
     */
    void records(List<PendingRow> batch, List<SourceRecord> out) {
        records(batch, out, informational);
    }

    /** The same, each record with the source partition and offset {@code offsets} give it, in output order. */
    void records(List<PendingRow> batch, List<SourceRecord> out, RecordOffsets offsets) {
        long now = wallClock.millis();
        List<PendingRow> inSeqOrder = new ArrayList<>(batch);
        inSeqOrder.sort(Comparator.comparingLong(PendingRow::seq));
        Map<String, Map<String, List<PendingRow>>> coalesceGroups = coalesceGroups(inSeqOrder);
        for (PendingRow row : inSeqOrder) {
            for (int slot = 0; slot < row.slotCount(); slot++) {
                Subscription sub = row.subscriptionAt(slot);
                if (!sub.coalesce()) {
                    out.add(record(row, sub, new PendingRow[] {row}, new int[] {slot}, null, offsets, now));
                    continue;
                }
                List<PendingRow> group = coalesceGroups.get(sub.name()).get(row.row().subject());
                if (group.get(group.size() - 1) != row) {
                    continue; // covered by the subject's latest event (highest seq) in this batch
                }
                PendingRow[] rows = new PendingRow[group.size()];
                int[] slots = new int[group.size()];
                List<Long> seqs = new ArrayList<>(group.size());
                rows[0] = row;
                slots[0] = slot;
                int k = 1;
                for (PendingRow covered : group) {
                    seqs.add(covered.seq());
                    if (covered != row) {
                        rows[k] = covered;
                        slots[k++] = slotOf(covered, sub);
                    }
                }
                out.add(record(row, sub, rows, slots, seqs, offsets, now));
            }
        }
        offsets.seal();
    }

    private Map<String, Map<String, List<PendingRow>>> coalesceGroups(List<PendingRow> batch) {
        Map<String, Map<String, List<PendingRow>>> groups = new HashMap<>();
        for (PendingRow row : batch) {
            for (int slot = 0; slot < row.slotCount(); slot++) {
                Subscription sub = row.subscriptionAt(slot);
                if (sub.coalesce()) {
                    groups.computeIfAbsent(sub.name(), k -> new HashMap<>())
                        .computeIfAbsent(row.row().subject(), k -> new ArrayList<>())
                        .add(row);
                }
            }
        }
        return groups;
    }

    private static int slotOf(PendingRow row, Subscription sub) {
        for (int slot = 0; slot < row.slotCount(); slot++) {
            if (row.subscriptionAt(slot) == sub) {
                return slot;
            }
        }
        throw new IllegalStateException("row " + row.seq() + " has no slot for " + sub.name());
    }

    private OutboxRecord record(PendingRow pending, Subscription sub, PendingRow[] rows, int[] slots,
                                List<Long> coalescedSeqs, RecordOffsets offsets, long now) {
        ClaimedRow row = pending.row();
        long timestamp = recordTimestamp(row.occurredAtMs(), now, timestampMaxAheadMs);
        if (timestamp != row.occurredAtMs() && !timestampReplacedLogged) {
            timestampReplacedLogged = true; // once per task: a writer whose clock is off would log every row
            log.warn("Outbox row seq={} id={}: its occurred_at {} is before 1970 or more than {} ms"
                + " (outbox.timestamp.max.ahead.ms) ahead of this worker's clock, which Kafka refuses as a record"
                + " timestamp; its records carry the time they were made instead, and the envelope and the"
                + " event.occurred_at header keep occurred_at. Further rows like it are not logged.", row.seq(),
                row.id(), Instant.ofEpochMilli(row.occurredAtMs()), timestampMaxAheadMs);
        }
        ConnectHeaders headers = new ConnectHeaders();
        headers.addString("event.id", row.id());
        headers.addString("event.type", row.type());
        headers.addString("subscription", sub.name());
        Schema valueSchema;
        Object value;
        switch (shape.valueFormat()) {
            case ENVELOPE -> {
                valueSchema = VALUE_SCHEMA;
                value = envelope(row, sub, coalescedSeqs);
            }
            case PAYLOAD -> {
                valueSchema = Schema.OPTIONAL_STRING_SCHEMA;
                value = row.payload();
            }
            case PAYLOAD_BYTES -> {
                valueSchema = Schema.OPTIONAL_BYTES_SCHEMA;
                value = row.payload().getBytes(StandardCharsets.UTF_8);
            }
            case PAYLOAD_JSON -> {
                valueSchema = null;
                value = PayloadJson.parse(row.payload());
            }
            default -> throw new IllegalStateException(shape.valueFormat().toString());
        }
        if (shape.payloadOnly()) {
            headers.addLong("event.seq", row.seq());
            headers.addString("event.subject", row.subject());
            headers.addString("event.occurred_at", Instant.ofEpochMilli(row.occurredAtMs()).toString());
            if (coalescedSeqs != null) {
                headers.addString("event.coalesced_seqs",
                    coalescedSeqs.stream().map(String::valueOf).collect(Collectors.joining(",")));
            }
        }
        if (shape.cloudEvents()) {
            addCloudEventsHeaders(headers, row);
        }
        if (row.headerKeys() != null) {
            for (int i = 0; i < row.headerKeys().length; i++) {
                headers.addString(row.headerKeys()[i], row.headerValues()[i]);
            }
        }
        return new OutboxRecord(offsets.partition(), offsets.next(rows), sub.topic(), KEY_SCHEMA,
            row.subject(), valueSchema, value, timestamp, headers, rows, slots);
    }

    private static Struct envelope(ClaimedRow row, Subscription sub, List<Long> coalescedSeqs) {
        return new Struct(VALUE_SCHEMA)
            .put("id", row.id())
            .put("seq", row.seq())
            .put("type", row.type())
            .put("subject", row.subject())
            .put("occurred_at", new java.util.Date(row.occurredAtMs()))
            .put("subscription", sub.name())
            .put("payload", row.payload())
            .put("coalesced_seqs", coalescedSeqs);
    }

    /** The CloudEvents Kafka protocol binding, binary mode: the event's attributes as {@code ce_} headers. */
    private void addCloudEventsHeaders(ConnectHeaders headers, ClaimedRow row) {
        headers.addString("ce_specversion", "1.0");
        headers.addString("ce_id", row.id());
        headers.addString("ce_type", row.type());
        headers.addString("ce_source", shape.cloudEventsSource());
        headers.addString("ce_time", Instant.ofEpochMilli(row.occurredAtMs()).toString());
        headers.addString("ce_subject", row.subject());
        if (shape.payloadOnly()) {
            headers.addString("content-type", "application/json");
        }
    }
}
