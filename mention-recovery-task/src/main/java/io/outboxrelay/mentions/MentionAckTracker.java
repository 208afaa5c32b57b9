package io.outboxrelay.mentions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the acknowledgements of the records in flight, per message. {@link #settle} runs on the
 * producer's I/O thread, so it only decrements counters and queues ids: the task thread marks the
 * queued messages set-based on its next poll. A message is queued only when every one of its records
 * was delivered; one undelivered record (null metadata) leaves the whole message unrouted.
 */
final class MentionAckTracker {
    private final ConcurrentLinkedQueue<MentionOffsets.Named> fullyAcked = new ConcurrentLinkedQueue<>();
    private final AtomicInteger unsettledMessages = new AtomicInteger();
    private final AtomicInteger undeliveredMessages = new AtomicInteger();
    private final Runnable onMessageSettled;

    /** @param onMessageSettled called (on the settling thread) whenever a message settles; must be cheap */
    MentionAckTracker(Runnable onMessageSettled) {
        this.onMessageSettled = onMessageSettled;
    }

    /** Starts tracking a message whose {@code records} records are about to be handed to Connect. */
    PendingMessage expect(MentionOffsets.Named message, int records) {
        if (records <= 0) {
            throw new IllegalArgumentException("a tracked message has at least one record");
        }
        unsettledMessages.incrementAndGet();
        return new PendingMessage(message, records);
    }

    /** The messages all of whose records were delivered since the last call. */
    List<MentionOffsets.Named> drainAcked() {
        List<MentionOffsets.Named> out = new ArrayList<>();
        for (MentionOffsets.Named m; (m = fullyAcked.poll()) != null; ) {
            out.add(m);
        }
        return out;
    }

    /** True when no tracked message still waits for a record's outcome. */
    boolean allSettled() {
        return unsettledMessages.get() == 0;
    }

    /** Messages that settled with at least one undelivered record since the last call. */
    int drainUndeliveredMessages() {
        return undeliveredMessages.getAndSet(0);
    }

    /** One message's outstanding records. */
    final class PendingMessage {
        private final MentionOffsets.Named message;
        private final AtomicInteger remaining;
        private volatile boolean undelivered;

        private PendingMessage(MentionOffsets.Named message, int records) {
            this.message = message;
            this.remaining = new AtomicInteger(records);
        }

        String messageId() {
            return message.id();
        }

        /** Whether one of its records was acknowledged without metadata already. */
        boolean undelivered() {
            return undelivered;
        }

        /** Records the outcome of one of this message's records; call once per record. */
        void settle(boolean delivered) {
            if (!delivered) {
                undelivered = true; // published by the decrement below
            }
            int left = remaining.decrementAndGet();
            if (left != 0) {
                return;
            }
            if (undelivered) {
                undeliveredMessages.incrementAndGet();
            } else {
                fullyAcked.add(message);
            }
            unsettledMessages.decrementAndGet();
            onMessageSettled.run();
        }
    }
}
