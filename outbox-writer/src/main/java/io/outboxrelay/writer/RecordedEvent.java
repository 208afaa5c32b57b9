package io.outboxrelay.writer;

import java.util.Objects;
import java.util.UUID;

/**
 * An event {@link OutboxWriter#record recorded} in the caller's transaction: its {@code id} (the
 * value every Kafka record of it carries, and what {@link FanoutReceipts} awaits) and its {@code seq}.
 * Both exist from the INSERT on, but the event is only real once the caller commits.
 *
 * @param id  the event's {@code id} column
 * @param seq the event's {@code seq} column, assigned at INSERT (not commit) time
 */
public record RecordedEvent(UUID id, long seq) {
    public RecordedEvent {
        Objects.requireNonNull(id, "id");
    }
}
