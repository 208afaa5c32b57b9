package io.outboxrelay.connector;

import io.outboxrelay.common.IdentityRecord;
import java.util.Map;
import org.apache.kafka.connect.header.Headers;

/**
 * A record a replay sent again: the live record's shape ({@link OutboxRecordFactory}) plus the header
 * {@code event.replay} naming the request, carrying the chunk its acknowledgement settles. Its source partition
 * is the request's own ({@code {"outbox.replay": "<table>#<id>"}}), so it never touches the offsets of live
 * delivery (docs/exactly-once.md).
 */
final class ReplayRecord extends IdentityRecord {
    static final String HEADER = "event.replay";
    final ReplayChunk chunk;

    private ReplayRecord(OutboxRecord live, Headers headers, ReplayChunk chunk) {
        super(live.sourcePartition(), live.sourceOffset(), live.topic(), live.keySchema(), live.key(),
            live.valueSchema(), live.value(), live.timestamp(), headers);
        this.chunk = chunk;
    }

    /** {@code live} as the replay of {@code chunk}'s request sends it. */
    static ReplayRecord of(OutboxRecord live, ReplayChunk chunk) {
        Headers headers = live.headers().duplicate().addString(HEADER, Long.toString(chunk.request.id()));
        return new ReplayRecord(live, headers, chunk);
    }

    /** The source partition and offsets of one request's records: nobody reads them back. */
    static RecordOffsets offsets(String table, long requestId) {
        return RecordOffsets.seqIn(Map.of("outbox.replay", table + "#" + requestId));
    }
}
