package io.outboxrelay.connector;

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

    /** Offsets nobody reads back: the row's seq, in the table's partition. */
    static RecordOffsets informational(String table) {
        Map<String, Object> partition = Map.of("outbox", table);
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
