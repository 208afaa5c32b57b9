package io.outboxrelay.writer;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * Proof that the relay fanned an event out: every matching subscriber's Kafka record was
 * acknowledged and the row was stamped. Always read back from the row itself, so a stray or forged
 * notification on the receipt channel can never produce one.
 *
 * @param id          the event id
 * @param fannedOutAt the row's {@code fanned_out_at}
 * @param fanout      the row's {@code fanout} as JSON text, e.g.
 *                    {@code {"webhooks": {"topic": "webhooks", "partition": 0, "offset": 41}}};
 *                    {@code {}} when no subscription matched the event's type; null only if the
 *                    stamper wrote none
 * @param source      how the receipt was learned
 */
public record Receipt(UUID id, Instant fannedOutAt, String fanout, Source source) {
    public Receipt {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(fannedOutAt, "fannedOutAt");
        Objects.requireNonNull(source, "source");
    }

    /** How a receipt was learned. */
    public enum Source {
        /** The relay's notification on the receipt channel named the event (the fault-free path). */
        NOTIFY,
        /**
         * The periodic read of {@code fanned_out_at} found the stamp: the notification was lost
         * (listening session down or reconnecting, receipts disabled on the relay, or
         * {@code listen(false)}).
         */
        FALLBACK
    }
}
