package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** An offset is computed once, when first read, whatever reads it and how often. */
class ComputedOffsetTest {
    @Test
    void theEntriesAreComputedOnceWhenFirstReadAndKeptInTheirOrder() {
        AtomicInteger computations = new AtomicInteger();
        ComputedOffset offset = new ComputedOffset(() -> {
            computations.incrementAndGet();
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("v", 1);
            v.put("pending", "1+2");
            return v;
        });
        assertThat(computations).hasValue(0);
        assertThat(offset.computed()).isFalse();

        assertThat(offset.get("pending")).isEqualTo("1+2");
        assertThat(offset).isEqualTo(Map.of("v", 1, "pending", "1+2"));
        assertThat(offset.keySet()).containsExactly("v", "pending");
        assertThat(offset.toString()).isEqualTo("{v=1, pending=1+2}");
        assertThat(computations).hasValue(1);
        assertThat(offset.computed()).isTrue();
    }
}
