package io.outboxrelay.connector;

import io.outboxrelay.common.Json;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciliation at a relay task's start (docs/exactly-once.md, 3.5): the committed source offsets of every
 * slot of the connector (of every task count) name rows whose records are in Kafka (committed in a transaction, or acknowledged
 * without exactly-once) and whose stamp may be missing; before its first claim the task stamps those of its
 * share that the named owner still leases, without producing them again. The slots are read at start; a
 * failed stamp fails the pass, and the next pass carries on with the slots not done yet.
 */
final class SlotReconciler {
    private static final Logger log = LoggerFactory.getLogger(SlotReconciler.class);
    /**
     * Slots without a count (written by versions before 2026-12) always read: a slot is written only by a task that
     * produced, so a small index can hold an old count.
     */
    static final int SLOTS_READ_AT_LEAST = 1_024;
    /**
     * Task counts whose slots are always read (every index of each: 2,080 slots), and the current count's: a slot of
     * a generation of more relay tasks than this, other than the current one, is not read, and the rows it names are
     * produced again if a crash left them unstamped (docs/exactly-once.md, 5).
     */
    static final int COUNTS_READ_AT_LEAST = 64;
    private static final int SEQS_SHOWN = 10;

    /** A slot read, by its name after the table's ("3/4": index 3 of 4; "3": a slot without a count). */
    private record Slot(String name, PendingOffset.Named named) {
    }

    private final List<Slot> toReconcile;
    private final List<Subscription> subscriptions;
    private final Map<String, String> fanoutOfType = new HashMap<>();

    private SlotReconciler(List<Slot> toReconcile, List<Subscription> subscriptions) {
        this.toReconcile = toReconcile;
        this.subscriptions = subscriptions;
    }

    /** Nothing to reconcile (offsets that name no rows: {@code errors.tolerance=all}, or no offset reader). */
    static SlotReconciler none() {
        return new SlotReconciler(new ArrayList<>(), List.of());
    }

    /**
     * Reads the slot of every index of every task count up to {@code max(relayTasks, 64)} of {@code table}, and the
     * slots without a count {@code 0 ... max(relayTasks, 1024) - 1}, further while a value says an earlier generation
     * had more relay tasks.
     *
     * @throws ConnectException when the offsets cannot be read
     */
    static SlotReconciler read(OffsetStorageReader reader, String table, int relayTasks,
                               List<Subscription> subscriptions) {
        List<Slot> named = new ArrayList<>();
        List<Map<String, Object>> counted = new ArrayList<>();
        for (int count = 1; count <= Math.max(relayTasks, COUNTS_READ_AT_LEAST); count++) {
            for (int i = 0; i < count; i++) {
                counted.add(PendingOffset.slot(table, i, count));
            }
        }
        Map<Map<String, Object>, Map<String, Object>> values = offsets(reader, counted);
        for (Map<String, Object> partition : counted) {
            add(named, table, partition, values);
        }
        int read = 0;
        int upTo = Math.max(relayTasks, SLOTS_READ_AT_LEAST);
        while (read < upTo) {
            List<Map<String, Object>> partitions = new ArrayList<>(upTo - read);
            for (int i = read; i < upTo; i++) {
                partitions.add(PendingOffset.slotWithoutCount(table, i));
            }
            values = offsets(reader, partitions);
            read = upTo;
            for (Map<String, Object> partition : partitions) {
                PendingOffset.Named n = add(named, table, partition, values);
                if (n != null) {
                    upTo = Math.max(upTo, n.tasks());
                }
            }
        }
        int rows = named.stream().mapToInt(s -> s.named().seqs().length).sum();
        if (rows > 0) {
            log.info("Committed source offsets of {} slot(s) name {} row(s) produced and maybe not stamped; they are"
                + " reconciled before the first claim", named.size(), rows);
        }
        named.removeIf(s -> s.named().seqs().length == 0);
        return new SlotReconciler(named, subscriptions);
    }

    private static Map<Map<String, Object>, Map<String, Object>> offsets(OffsetStorageReader reader,
                                                                         List<Map<String, Object>> partitions) {
        try {
            return reader.offsets(partitions);
        } catch (RuntimeException e) {
            throw new ConnectException("Could not read this connector's committed source offsets, which name the"
                + " rows produced before a crash and not yet stamped (docs/exactly-once.md): " + e.getMessage()
                + ". The worker reads them from its offsets topic: check that the broker is reachable, then"
                + " restart the task.", e);
        }
    }

    /** The slot's names, added to {@code named} when it has a value; null when it has none. */
    private static PendingOffset.Named add(List<Slot> named, String table, Map<String, Object> partition,
                                           Map<Map<String, Object>, Map<String, Object>> values) {
        String slot = (String) partition.get(PendingOffset.SLOT_KEY);
        PendingOffset.Named n = parse(slot, values == null ? null : values.get(partition));
        if (n != null) {
            named.add(new Slot(slot.substring(table.length() + 1), n));
        }
        return n;
    }

    private static PendingOffset.Named parse(String slot, Map<String, Object> value) {
        try {
            return PendingOffset.Named.parse(value);
        } catch (IllegalArgumentException e) {
            log.warn("Ignoring the committed source offset of slot {}: {}; the rows it named, if any were not"
                + " stamped, are produced again", slot, e.getMessage());
            return null;
        }
    }

    boolean done() {
        return toReconcile.isEmpty();
    }

    /** Stamps what the slots not done yet name; a slot whose stamp committed is done. */
    void reconcile(OutboxStore store) throws SQLException {
        while (!toReconcile.isEmpty()) {
            Slot slot = toReconcile.get(0);
            PendingOffset.Named named = slot.named();
            OutboxStore.Recovered r = store.stampRecovered(named.owner(), named.seqs(),
                type -> fanout(type, named.subscriptions()));
            toReconcile.remove(0);
            log.info("Slot {} (owner {}) named {} row(s): {} of this task's share stamped now without producing them"
                + " again, {} stamped already", slot.name(), named.owner(), named.seqs().length, r.stamped(),
                r.alreadyStamped());
            if (!r.notLeased().isEmpty()) {
                log.warn("Slot {} (owner {}) names {} row(s) of this task's share that are neither stamped nor leased"
                    + " by that owner any more, so they are left to be claimed and produced (again, if their records"
                    + " were delivered): requeued, released at a stop, claimed by another connector on the table, or"
                    + " rows of a table created again since; first seqs {}", slot.name(), named.owner(),
                    r.notLeased().size(), r.notLeased().subList(0, Math.min(SEQS_SHOWN, r.notLeased().size())));
            }
        }
    }

    /**
     * {@code {"<subscription>": {"recovered": "source offset"}}} for every subscription the type matches, of those
     * the offset says the task produced to ({@code producedTo}; null: not said, every one).
     */
    private String fanout(String type, Set<String> producedTo) {
        return fanoutOfType.computeIfAbsent(type + "\n" + producedTo, k -> Json.write(g -> {
            g.writeStartObject();
            for (Subscription s : subscriptions) {
                if (s.matches(type) && (producedTo == null || producedTo.contains(s.name()))) {
                    g.writeObjectFieldStart(s.name());
                    g.writeStringField("recovered", "source offset");
                    g.writeEndObject();
                }
            }
            g.writeEndObject();
        }));
    }
}
