package io.outboxrelay.connector;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * The records that describe poisoned rows on {@code outbox.poison.topic}: rows poisoned since the last
 * drain, described once the pass that poisoned them has nothing left to fail.
 */
final class PoisonRecords {
    static final Schema POISON_SCHEMA = SchemaBuilder.struct()
        .name("io.outboxrelay.OutboxPoison")
        .version(1)
        .doc("An outbox row the relay set aside after it could not be delivered.")
        .field("id", Schema.STRING_SCHEMA)
        .field("seq", Schema.INT64_SCHEMA)
        .field("type", Schema.STRING_SCHEMA)
        .field("subject", Schema.STRING_SCHEMA)
        .field("attempts", Schema.INT32_SCHEMA)
        .field("reason", Schema.STRING_SCHEMA)
        .field("occurred_at", Timestamp.SCHEMA)
        .field("poisoned_at", Timestamp.SCHEMA)
        .field("table", Schema.STRING_SCHEMA)
        .build();

    private final String topic;
    private final String table;
    private final List<PoisonedRow> pending = new ArrayList<>();

    /** @param topic empty when no topic is configured: nothing is described */
    PoisonRecords(String topic, String table) {
        this.topic = topic;
        this.table = table;
    }

    void add(List<PoisonedRow> rows) {
        if (!topic.isEmpty()) {
            pending.addAll(rows);
        }
    }

    /** One record per row poisoned since the last call. */
    List<SourceRecord> drain() {
        List<SourceRecord> out = new ArrayList<>(pending.size());
        for (PoisonedRow p : pending) {
            // a NULL id, type or subject (a column that allows it, changed after validation) is described as empty:
            // the reason names the NULL field, and the record still goes out
            Struct value = new Struct(POISON_SCHEMA)
                .put("id", text(p.id())).put("seq", p.seq()).put("type", text(p.type())).put("subject", text(p.subject()))
                .put("attempts", p.attempts()).put("reason", p.reason())
                .put("occurred_at", new Date(p.occurredAtMs())).put("poisoned_at", new Date(p.poisonedAtMs()))
                .put("table", table);
            out.add(new SourceRecord(Map.of("outbox", table), Map.of("seq", p.seq()), topic, null,
                Schema.STRING_SCHEMA, text(p.subject()), POISON_SCHEMA, value, p.poisonedAtMs()));
        }
        pending.clear();
        return out;
    }

    private static String text(String nullable) {
        return nullable == null ? "" : nullable;
    }
}
