package io.outboxrelay.connector;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a relay record looks like: the value ({@code value.format}) and the headers the relay adds
 * ({@code headers.format}, {@code cloudevents.source}).
 */
record RecordShape(ValueFormat valueFormat, boolean cloudEvents, String cloudEventsSource) {
    static final RecordShape ENVELOPE = new RecordShape(ValueFormat.ENVELOPE, false, "");

    /**
     * Headers the relay writes, in every value format, and a row may never set: on every record, and
     * {@code event.replay} on a replayed one (consumers tell a replay from live traffic by it).
     */
    static final List<String> RELAY_HEADERS = List.of("event.id", "event.type", "subscription", ReplayRecord.HEADER);
    /** Headers the payload formats add, carrying what the envelope holds in its fields. */
    static final List<String> PAYLOAD_HEADERS = List.of("event.seq", "event.subject", "event.occurred_at",
        "event.coalesced_seqs");
    /** Headers {@code headers.format=cloudevents} adds (the CloudEvents Kafka binding, binary mode). */
    static final List<String> CLOUDEVENTS_HEADERS = List.of("ce_specversion", "ce_id", "ce_type", "ce_source",
        "ce_time", "ce_subject", "content-type");

    /** The record value: the relay's envelope, or the event's payload in one of three Connect forms. */
    enum ValueFormat {
        /** Struct {@code io.outboxrelay.OutboxEvent}, the payload an escaped string inside it. */
        ENVELOPE("envelope"),
        /** The payload's JSON text, schema optional string: StringConverter writes it byte for byte. */
        PAYLOAD("payload"),
        /** The payload's JSON text as UTF-8, schema optional bytes: for ByteArrayConverter. */
        PAYLOAD_BYTES("payload.bytes"),
        /** The payload parsed into schemaless maps and lists: JsonConverter writes a JSON object. */
        PAYLOAD_JSON("payload.json");

        final String configName;

        ValueFormat(String configName) {
            this.configName = configName;
        }

        static ValueFormat of(String configName) {
            String name = configName.trim().toLowerCase(Locale.ROOT);
            for (ValueFormat f : values()) {
                if (f.configName.equals(name)) {
                    return f;
                }
            }
            throw new IllegalArgumentException("unknown value.format '" + configName + "'");
        }

        static List<String> configNames() {
            List<String> names = new ArrayList<>();
            for (ValueFormat f : values()) {
                names.add(f.configName);
            }
            return names;
        }
    }

    boolean payloadOnly() {
        return valueFormat != ValueFormat.ENVELOPE;
    }

    /**
     * The headers a row's {@code headers} column may not set under this shape: the ones the relay writes. The
     * envelope carries every other header of the row, as the contract has it, {@code event.seq} and the like included.
     */
    List<String> reservedHeaders() {
        List<String> all = new ArrayList<>(RELAY_HEADERS);
        if (payloadOnly()) {
            all.addAll(PAYLOAD_HEADERS);
        }
        if (cloudEvents) {
            all.addAll(CLOUDEVENTS_HEADERS);
        }
        return List.copyOf(all);
    }
}
