package io.outboxrelay.connector;

import java.util.List;
import java.util.Map;

/**
 * The source partition and offsets of one claim's records, asked once per record in output order. Under
 * {@code errors.tolerance=all} they are the old informational {@code {"outbox": table}} / {@code {"seq": n}}
 * ({@link #informational}); otherwise {@link BatchOffsets}, which name the rows delivered and not stamped.
 */
interface RecordOffsets {
    Map<String, ?> partition();

    /** The offset of the next record; {@code rows[0]} is the row it is about, the others those it covers. */
    Map<String, ?> next(PendingRow[] rows);

    /** Every record of the claim was made. */
    default void seal() {
    }

    /** Makes the offsets of each claim's records: informational, or naming the rows (docs/exactly-once.md, 3.1). */
    @FunctionalInterface
    interface Naming {
        /** Before {@code rows} are handed out: what {@code held} holds now are the earlier lists' rows. */
        RecordOffsets forClaim(HeldRows held, List<PendingRow> rows);

        static Naming informational(String table) {
            RecordOffsets offsets = RecordOffsets.informational(table);
            return (held, rows) -> offsets;
        }

        /**
         * @param subscriptions the names of the subscriptions the records go to ({@link PendingOffset#value})
         * @param wholeList every record of a list names every row of it (connector-defined transaction
         *                  boundaries); otherwise progressive offsets
         */
        static Naming pending(Map<String, Object> slot, String owner, int relayTasks, String subscriptions,
                              boolean wholeList) {
            return (held, rows) -> new BatchOffsets(slot, owner, relayTasks, subscriptions, held.producedNotStamped(),
                rows, wholeList);
        }
    }

    /** Offsets nobody reads back: the row's seq, in the table's partition. */
    static RecordOffsets informational(String table) {
        return seqIn(Map.of("outbox", table));
    }

    /** Each record's offset is the seq of the row it is about, in {@code partition}. */
    static RecordOffsets seqIn(Map<String, Object> partition) {
        return new RecordOffsets() {
            @Override
            public Map<String, ?> partition() {
                return partition;
            }

            @Override
            public Map<String, ?> next(PendingRow[] rows) {
                return Map.of("seq", rows[0].seq());
            }
        };
    }
}
