package io.outboxrelay.connector;

import io.outboxrelay.common.Json;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Tracks acknowledgements per row across all its subscriber records, and queues the rows they settle for
 * {@link HeldRows} to take in. {@link #onCommit} runs on the producer's I/O thread and only touches atomics
 * and a concurrent queue; everything else runs on the task thread. What a null {@code metadata} means
 * depends on {@code errors.tolerance}: under {@code none} only an SMT that filtered the record can cause it
 * (recorded as filtered), under {@code all} a dropped record is indistinguishable from a filtered one and
 * counts as not delivered.
 */
final class FanOutAckTracker {
    /** The fanout entry of a record a transform filtered under {@code errors.tolerance=none}. */
    static final String FILTERED = "{\"filtered\":true}";

    private final boolean toleratesAllErrors;
    private final Runnable onRowSettled;
    private final Queue<PendingRow> settled = new ConcurrentLinkedQueue<>();
    /** The latest poll() whose records the producer acknowledged (with metadata); -1 before any. */
    private final AtomicLong ackedThroughPoll = new AtomicLong(-1);

    FanOutAckTracker(boolean toleratesAllErrors, Runnable onRowSettled) {
        this.toleratesAllErrors = toleratesAllErrors;
        this.onRowSettled = onRowSettled;
    }

    /** Task thread: a claimed row now waits for its records (or is already settled: no slots). */
    void track(PendingRow row) {
        if (row.settled()) {
            settled.add(row);
        }
    }

    /** Producer I/O thread. */
    void onCommit(OutboxRecord record, RecordMetadata metadata) {
        if (metadata != null) {
            ackedThroughPoll.accumulateAndGet(record.rows[0].handedOutInPoll(), Math::max);
        }
        for (int i = 0; i < record.rows.length; i++) {
            PendingRow row = record.rows[i];
            int slot = record.slots[i];
            boolean last;
            if (metadata != null) {
                last = row.complete(slot, i == 0 ? delivered(metadata) : coalescedInto(record.rows[0].seq()));
            } else if (!toleratesAllErrors) {
                last = row.complete(slot, FILTERED);
            } else {
                last = row.fail(slot, "record for subscription '" + row.subscription(slot)
                    + "' was not acknowledged (dropped under errors.tolerance=all; see the worker log or DLQ)");
            }
            if (last) {
                settled.add(row);
                onRowSettled.run();
            }
        }
    }

    /** Task thread: the rows settled since the last call, each once. */
    List<PendingRow> drainSettled() {
        List<PendingRow> out = new ArrayList<>();
        PendingRow row;
        while ((row = settled.poll()) != null) {
            out.add(row);
        }
        return out;
    }

    /** Whether rows settled that {@link #drainSettled} has not taken yet. */
    boolean hasSettled() {
        return !settled.isEmpty();
    }

    /**
     * Task thread: every slot still open in {@code inFlight} is settled as filtered, as a null {@code commitRecord}
     * would settle it under {@code errors.tolerance=none}; a later call for the same slot changes nothing.
     *
     * @return how many rows this settled
     */
    int settleOpenSlotsAsFiltered(Collection<PendingRow> inFlight) {
        int rows = 0;
        for (PendingRow row : inFlight) {
            boolean last = false;
            for (int slot = 0; slot < row.slotCount(); slot++) {
                last |= row.complete(slot, FILTERED);
            }
            if (last) {
                settled.add(row);
                rows++;
            }
        }
        return rows;
    }

    /** The latest poll() any of whose records the producer acknowledged with metadata; -1 before any. */
    long ackedThroughPoll() {
        return ackedThroughPoll.get();
    }

    /** Task thread: forget the settled rows not taken in (their leases were released). */
    void clear() {
        settled.clear();
    }

    static String delivered(RecordMetadata m) {
        return Json.write(g -> {
            g.writeStartObject();
            g.writeStringField("topic", m.topic());
            g.writeNumberField("partition", m.partition());
            g.writeNumberField("offset", m.offset());
            g.writeEndObject();
        });
    }

    static String coalescedInto(long seq) {
        return Json.write(g -> {
            g.writeStartObject();
            g.writeNumberField("coalesced_into", seq);
            g.writeEndObject();
        });
    }
}
