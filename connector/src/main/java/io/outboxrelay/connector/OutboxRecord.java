package io.outboxrelay.connector;

import io.outboxrelay.common.IdentityRecord;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Headers;

/**
 * A record the relay produced, carrying the row slots its acknowledgement settles. Connect hands
 * the very record returned from {@code poll()} back to {@code commitRecord}, so the slots are found
 * without a lookup. A coalesced record settles the latest row's slot and the slots of the rows it
 * covers. Equal only to itself ({@link IdentityRecord}).
 */
final class OutboxRecord extends IdentityRecord {
    final PendingRow[] rows;
    final int[] slots;

    OutboxRecord(Map<String, ?> sourcePartition, Map<String, ?> sourceOffset, String topic, Schema keySchema,
                 Object key, Schema valueSchema, Object value, Long timestamp, Headers headers,
                 PendingRow[] rows, int[] slots) {
        super(sourcePartition, sourceOffset, topic, keySchema, key, valueSchema, value, timestamp, headers);
        this.rows = rows;
        this.slots = slots;
    }
}
