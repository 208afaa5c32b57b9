package io.outboxrelay.connector;

import java.nio.charset.StandardCharsets;
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

/**
 * Turns claimed rows into one record per (row, matching subscription): key {@code subject}, timestamp
 * {@code occurred_at}, headers {@code event.id}, {@code event.type}, {@code subscription} plus the row's
 * own headers. The value is an {@code OutboxEvent} struct, or with a payload {@link RecordShape.ValueFormat}
 * the payload itself, the rest of the metadata then in headers. A coalescing subscription gets, per
 * subject within the batch, one record for the latest event that covers the earlier ones.
 */
final class OutboxRecordFactory {
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

    OutboxRecordFactory(List<Subscription> subscriptions, String table) {
        this(subscriptions, table, RecordShape.ENVELOPE);
    }

    OutboxRecordFactory(List<Subscription> subscriptions, String table, RecordShape shape) {
        this.subscriptions = subscriptions;
        this.informational = RecordOffsets.informational(table);
        this.shape = shape;
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
        List<PendingRow> inSeqOrder = new ArrayList<>(batch);
        inSeqOrder.sort(Comparator.comparingLong(PendingRow::seq));
        Map<String, Map<String, List<PendingRow>>> coalesceGroups = coalesceGroups(inSeqOrder);
        for (PendingRow row : inSeqOrder) {
            for (int slot = 0; slot < row.slotCount(); slot++) {
                Subscription sub = row.subscriptionAt(slot);
                if (!sub.coalesce()) {
                    out.add(record(row, sub, new PendingRow[] {row}, new int[] {slot}, null, offsets));
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
                out.add(record(row, sub, rows, slots, seqs, offsets));
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
                                List<Long> coalescedSeqs, RecordOffsets offsets) {
        ClaimedRow row = pending.row();
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
            row.subject(), valueSchema, value, row.occurredAtMs(), headers, rows, slots);
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
