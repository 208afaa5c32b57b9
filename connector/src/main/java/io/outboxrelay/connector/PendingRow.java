package io.outboxrelay.connector;

import io.outboxrelay.common.Json;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A claimed row waiting for its subscriber records to be acknowledged. One slot per matching
 * subscription; a slot is settled with its {@code fanout} entry (topic/partition/offset, filtered,
 * coalesced_into) or failed. The row is settled once every slot is, and then is stamped (all slots
 * delivered) or released for a retry (any slot failed). Slots are settled from the producer's I/O
 * thread, so settling is lock-free and O(1).
 */
final class PendingRow {
    private final ClaimedRow row;
    private final Subscription[] subscriptions;
    private final AtomicReferenceArray<String> outcomes;
    private final AtomicInteger remaining;
    private volatile String failure;
    /** The poll() that handed its records to Connect (HeldRows counts them); read on the producer's thread. */
    private volatile long handedOutInPoll;

    PendingRow(ClaimedRow row, Subscription[] subscriptions) {
        this.row = row;
        this.subscriptions = subscriptions;
        this.outcomes = new AtomicReferenceArray<>(subscriptions.length);
        this.remaining = new AtomicInteger(subscriptions.length);
    }

    void handedOut(long poll) {
        handedOutInPoll = poll;
    }

    long handedOutInPoll() {
        return handedOutInPoll;
    }

    ClaimedRow row() {
        return row;
    }

    long seq() {
        return row.seq();
    }

    String subscription(int slot) {
        return subscriptions[slot].name();
    }

    Subscription subscriptionAt(int slot) {
        return subscriptions[slot];
    }

    int slotCount() {
        return subscriptions.length;
    }

    boolean settled() {
        return remaining.get() == 0;
    }

    /** @return true when this call settled the row's last slot */
    boolean complete(int slot, String fanoutEntry) {
        if (!outcomes.compareAndSet(slot, null, fanoutEntry)) {
            return false; // a slot is settled once; a repeated callback changes nothing
        }
        return remaining.decrementAndGet() == 0;
    }

    /** @return true when this call settled the row's last slot */
    boolean fail(int slot, String reason) {
        if (failure == null) {
            failure = reason;
        }
        return complete(slot, "null");
    }

    String failure() {
        return failure;
    }

    boolean failed() {
        return failure != null;
    }

    /** The JSON object stamped into {@code fanout}: one entry per subscription slot. */
    String fanoutJson() {
        return Json.write(g -> {
            g.writeStartObject();
            for (int i = 0; i < subscriptions.length; i++) {
                g.writeFieldName(subscriptions[i].name());
                g.writeRawValue(outcomes.get(i)); // each outcome is JSON already, written by FanOutAckTracker
            }
            g.writeEndObject();
        });
    }
}
