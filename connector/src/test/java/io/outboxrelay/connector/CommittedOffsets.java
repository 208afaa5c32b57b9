package io.outboxrelay.connector;

import java.util.HashMap;
import java.util.Map;

/** What a relay task's committed source offset names, for tests outside this package. */
public final class CommittedOffsets {
    private CommittedOffsets() {
    }

    /** How many rows a committed offset value names; 0 for a value that names none (or is not a slot's). */
    public static int rowsNamed(Map<String, ?> value) {
        PendingOffset.Named named = value == null ? null : PendingOffset.Named.parse(new HashMap<>(value));
        return named == null ? 0 : named.seqs().length;
    }
}
