package io.outboxrelay.common;

import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * A source record equal only to itself. Connect keeps a task's records in hash sets and maps keyed by the record
 * ({@code committableRecords} of an exactly-once task, {@code WorkerTransactionContext}), and
 * {@code SourceRecord}'s value equality would read every record's source offset (a {@link ComputedOffset},
 * computed only when Connect commits it) and value there. Connect hands the task back the very record it
 * returned, so identity is all a record needs.
 */
public abstract class IdentityRecord extends SourceRecord {
    protected IdentityRecord(Map<String, ?> sourcePartition, Map<String, ?> sourceOffset, String topic, Schema keySchema,
                             Object key, Schema valueSchema, Object value, Long timestamp, Iterable<Header> headers) {
        super(sourcePartition, sourceOffset, topic, null, keySchema, key, valueSchema, value, timestamp, headers);
    }

    @Override
    public final boolean equals(Object o) {
        return this == o;
    }

    @Override
    public final int hashCode() {
        return System.identityHashCode(this);
    }
}
