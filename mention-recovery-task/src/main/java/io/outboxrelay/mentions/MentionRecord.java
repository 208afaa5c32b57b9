package io.outboxrelay.mentions;

import io.outboxrelay.common.IdentityRecord;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.connect.data.Schema;

/**
 * A recovered-mention record that knows which message it belongs to, so {@code commitRecord} can
 * settle it in O(1) without a lookup. Connect hands the task back the record it returned from
 * {@code poll()} (before transformations), so this type survives to the acknowledgement. Equal only to
 * itself ({@link IdentityRecord}).
 */
final class MentionRecord extends IdentityRecord {
    private final MentionAckTracker.PendingMessage pending;
    private final AtomicBoolean settled = new AtomicBoolean();

    MentionRecord(Map<String, ?> sourcePartition, Map<String, ?> sourceOffset, String topic,
                  Schema keySchema, Object key, Schema valueSchema, Object value, long timestamp,
                  MentionAckTracker.PendingMessage pending) {
        super(sourcePartition, sourceOffset, topic, keySchema, key, valueSchema, value, timestamp, null);
        this.pending = pending;
    }

    /** Passes this record's outcome to its message; a second call for the same record is ignored. */
    void settle(boolean delivered) {
        if (settled.compareAndSet(false, true)) {
            pending.settle(delivered);
        }
    }

    String messageId() {
        return pending.messageId();
    }
}
