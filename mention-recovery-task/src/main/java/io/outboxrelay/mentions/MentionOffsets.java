package io.outboxrelay.mentions;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.outboxrelay.common.ComputedOffset;
import io.outboxrelay.common.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The source offsets of one batch's records (docs/exactly-once.md, 3.12): each names, as
 * {@code {"v": 1, "pending": "[[seq,\"id\"],…]"}}, the messages all of whose records come at or before it, so
 * whatever prefix of the batch Connect commits names only messages whose every record is in Kafka; a task that
 * starts marks those instead of publishing them again. With connector-defined transaction boundaries every
 * record of a list names every message of it. Messages already known undelivered (a null acknowledgement) when
 * Connect reads the offset are left out. Task thread only while the batch is built.
 */
final class MentionOffsets {
    static final int VERSION = 1;

    /** A message by its seq and id: one a committed offset names, or one to mark. */
    record Named(long seq, String id) {
    }

    private record Entry(long seq, String id, MentionAckTracker.PendingMessage pending) {
    }

    private final boolean wholeList;
    private final List<Entry> complete = new ArrayList<>();
    private ComputedOffset whole;

    /** @param wholeList every record names every message of the batch (connector-defined boundaries) */
    MentionOffsets(boolean wholeList) {
        this.wholeList = wholeList;
    }

    /**
     * The offset of the next record, of {@code message}; {@code lastOfMessage} when it is that message's last
     * record (progressive offsets name the message from there on).
     */
    Map<String, ?> next(UnroutedMessage message, MentionAckTracker.PendingMessage pending, boolean lastOfMessage) {
        if (lastOfMessage) {
            complete.add(new Entry(message.seq(), message.id(), pending));
        }
        if (wholeList) {
            if (whole == null) {
                // read after the batch is built: by then every message of it is complete
                whole = new ComputedOffset(() -> value(complete.size()));
            }
            return whole;
        }
        int count = complete.size();
        return new ComputedOffset(() -> value(count));
    }

    private Map<String, Object> value(int count) {
        String pending = Json.write(g -> {
            g.writeStartArray();
            for (Entry e : complete.subList(0, count)) {
                if (!e.pending().undelivered()) {
                    g.writeStartArray();
                    g.writeNumber(e.seq());
                    g.writeString(e.id());
                    g.writeEndArray();
                }
            }
            g.writeEndArray();
        });
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("v", VERSION);
        v.put("pending", pending);
        return v;
    }

    /**
     * The messages a committed offset value names; none for a value of another shape (the old {@code {"seq": n}},
     * a later version).
     *
     * @throws IllegalArgumentException for a version-1 value that is malformed
     */
    static List<Named> parse(Map<String, Object> value) {
        if (value == null || !(value.get("v") instanceof Number v) || v.intValue() != VERSION) {
            return List.of();
        }
        if (!(value.get("pending") instanceof String pending)) {
            throw new IllegalArgumentException("a version-1 mention offset without pending: " + value);
        }
        List<Named> out = new ArrayList<>();
        try (JsonParser p = Json.FACTORY.createParser(pending)) {
            expect(p.nextToken(), JsonToken.START_ARRAY, pending);
            while (p.nextToken() == JsonToken.START_ARRAY) {
                expect(p.nextToken(), JsonToken.VALUE_NUMBER_INT, pending);
                long seq = p.getLongValue();
                expect(p.nextToken(), JsonToken.VALUE_STRING, pending);
                String id = p.getText();
                expect(p.nextToken(), JsonToken.END_ARRAY, pending);
                out.add(new Named(seq, id));
            }
            expect(p.currentToken(), JsonToken.END_ARRAY, pending);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a list of [seq, id] pairs: " + pending, e);
        }
        return out;
    }

    private static void expect(JsonToken actual, JsonToken expected, String pending) {
        if (actual != expected) {
            throw new IllegalArgumentException("not a list of [seq, id] pairs: " + pending);
        }
    }
}
