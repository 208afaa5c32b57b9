package io.outboxrelay.connector;

import org.apache.kafka.connect.data.Schema;

/**
 * The Connect schemas of every key and value the relay emits. Their Avro form is checked in under
 * {@code schemas/avro/} and a test keeps the two equal.
 */
public final class OutboxSchemas {
    /** Key of every relay record: the event's {@code subject}. */
    public static final Schema EVENT_KEY = OutboxRecordFactory.KEY_SCHEMA;
    /** Value of a subscriber record: {@code io.outboxrelay.OutboxEvent}. */
    public static final Schema EVENT_VALUE = OutboxRecordFactory.VALUE_SCHEMA;
    /** Value of a record on {@code outbox.poison.topic}: {@code io.outboxrelay.OutboxPoison}. */
    public static final Schema POISON_VALUE = PoisonRecords.POISON_SCHEMA;

    private OutboxSchemas() {
    }
}
