package io.outboxrelay.connector;

import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * A record the relay produced, carrying the row slots its acknowledgement settles. Connect hands
 * the very record returned from {@code poll()} back to {@code commitRecord}, so the slots are found
 * without a lookup. A coalesced record settles the latest row's slot and the slots of the rows it
 * covers. Equality is identity: Connect keeps records in hash sets and maps keyed by the record
 * ({@code committableRecords}, {@code WorkerTransactionContext}), and {@code SourceRecord}'s value equality
 * would read every record's source offset (computed only when Connect flushes it) and value struct there.
 */
final class OutboxRecord extends SourceRecord {
    final PendingRow[] rows;
    final int[] slots;

    OutboxRecord(Map<String, ?> sourcePartition, Map<String, ?> sourceOffset, String topic, Schema keySchema,
                 Object key, Schema valueSchema, Object value, Long timestamp, Headers headers,
                 PendingRow[] rows, int[] slots) {
        super(sourcePartition, sourceOffset, topic, null, keySchema, key, valueSchema, value, timestamp, headers);
        this.rows = rows;
        this.slots = slots;
    }

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }
}
