package io.outboxrelay.common;

import java.util.AbstractMap;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A source offset whose entries are computed when first read, and then kept. Connect keeps a reference to every
 * record's offset but reads only the one it commits (its offset writer serialises the last offset of a
 * partition at each flush: docs/exactly-once.md, 1.10), so an offset that names many rows costs each record only
 * this object. Records carrying one must not use {@code SourceRecord}'s value equality, which would read it.
 */
public final class ComputedOffset extends AbstractMap<String, Object> {
    private final Supplier<Map<String, Object>> compute;
    private Map<String, Object> value;

    public ComputedOffset(Supplier<Map<String, Object>> compute) {
        this.compute = compute;
    }

    @Override
    public synchronized Set<Entry<String, Object>> entrySet() {
        if (value == null) {
            value = Collections.unmodifiableMap(compute.get());
        }
        return value.entrySet();
    }

    /** Whether anyone has read the entries yet. */
    public synchronized boolean computed() {
        return value != null;
    }
}
