package io.outboxrelay.connector;

import io.outboxrelay.common.IdentityRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * A record a replay sent again: the live record's shape ({@link OutboxRecordFactory}) plus the header
 * {@code event.replay} naming the request, carrying the chunk its acknowledgement settles. Its source partition
 * is the request's own ({@code {"outbox.replay": "<table>#<id>"}}), so it never touches the offsets of live
 * delivery; its offset names how far the request is delivered, which a task that takes the request over reads
 * back (docs/replay.md, "Exactly-once").
 */
final class ReplayRecord extends IdentityRecord {
    static final String HEADER = "event.replay";
    static final String PARTITION_KEY = "outbox.replay";
    static final String PROGRESS_KEY = "progress";
    final ReplayChunk chunk;

    private ReplayRecord(OutboxRecord live, Map<String, ?> offset, Headers headers, ReplayChunk chunk) {
        super(live.sourcePartition(), offset, live.topic(), live.keySchema(), live.key(), live.valueSchema(),
            live.value(), live.timestamp(), headers);
        this.chunk = chunk;
    }

    /** The source partition of request {@code requestId}'s records. */
    static Map<String, Object> partition(String table, long requestId) {
        return Map.of(PARTITION_KEY, table + "#" + requestId);
    }

    /**
     * The chunk's records as the replay sends them: {@code made} (the live shape, in output order) each with
     * {@code event.replay} and a source offset {@code {"progress": p}}, p being the highest seq up to which every
     * row of the chunk is covered by this record or an earlier one (a coalesced record covers a subject's earlier
     * rows, which may come after earlier records); the last record's p is the chunk's {@link ReplayChunk#walkedTo}.
     * So whatever prefix of the records Connect commits with its offset, the rows up to p are in Kafka.
     */
    static List<ReplayRecord> of(List<SourceRecord> made, ReplayChunk chunk) {
        long[] progress = new long[made.size()];
        long firstLater = Long.MAX_VALUE;
        for (int k = made.size() - 1; k >= 0; k--) {
            progress[k] = Math.min(chunk.walkedTo, firstLater - 1);
            for (PendingRow row : ((OutboxRecord) made.get(k)).rows) {
                firstLater = Math.min(firstLater, row.seq());
            }
        }
        String id = Long.toString(chunk.request.id());
        List<ReplayRecord> out = new ArrayList<>(made.size());
        for (int k = 0; k < made.size(); k++) {
            OutboxRecord live = (OutboxRecord) made.get(k);
            out.add(new ReplayRecord(live, Map.of(PROGRESS_KEY, progress[k]), live.headers().duplicate().addString(HEADER,
                id), chunk));
        }
        return out;
    }

    /** The progress a committed source offset of the request's partition names, or -1. */
    static long committedProgress(Map<String, Object> offset) {
        return offset != null && offset.get(PROGRESS_KEY) instanceof Number n ? n.longValue() : -1;
    }
}
