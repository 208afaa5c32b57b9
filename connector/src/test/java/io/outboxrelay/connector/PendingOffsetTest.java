package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.outboxrelay.common.ComputedOffset;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The offset a relay record carries (docs/exactly-once.md, 3.3): the slot partition has one entry, the
 * {@code pending} runs round-trip and stay small, a claim's offsets are progressive (a record names only the
 * rows complete at it), and the value is computed once, when Connect first reads it.
 */
class PendingOffsetTest {
    private static final Subscription ALL = new Subscription("all", "all", List.of("*"), false);
    private static final Subscription ORDERS = new Subscription("orders", "orders", List.of("order.*"), false);

    @Test
    void theSlotPartitionHasOneEntryNamingTheIndexAndTheTaskCount() {
        assertThat(PendingOffset.slot("public.events", 3, 4))
            .containsExactly(Map.entry("outbox.slot", "public.events#3/4"));
        assertThat(PendingOffset.slotWithoutCount("public.events", 3))
            .containsExactly(Map.entry("outbox.slot", "public.events#3"));
    }

    @Test
    void thePendingEncodingIsRunsOfGapsAndRoundTrips() {
        long[] seqs = LongStream.concat(LongStream.rangeClosed(1200, 1399),
            LongStream.concat(LongStream.of(1405), LongStream.rangeClosed(1410, 1420))).toArray();
        assertThat(PendingOffset.encode(seqs, seqs.length)).isEqualTo("1200+199,6,5+10");
        assertThat(PendingOffset.decode("1200+199,6,5+10")).containsExactly(seqs);
        assertThat(PendingOffset.encode(new long[0], 0)).isEmpty();
        assertThat(PendingOffset.decode("")).isEmpty();
        assertThat(PendingOffset.decode(PendingOffset.encode(new long[] {7}, 1))).containsExactly(7);
    }

    @Test
    void theEncodingSortsAndDropsRepeats() {
        long[] seqs = {9, 3, 4, 9, 1};
        assertThat(PendingOffset.encode(seqs, seqs.length)).isEqualTo("1,2+1,5");
    }

    @Test
    void aMalformedPendingSetIsRefused() {
        assertThatThrownBy(() -> PendingOffset.decode("1,x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PendingOffset.decode("5,-2")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PendingOffset.decode("5+")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void seqsAtTheEndsOfLongsRangeRoundTripAndEnd() {
        // an application may insert any seq: a run ending at Long.MAX_VALUE looped for ever, a negative one was unreadable
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
            for (long[] seqs : List.of(new long[] {Long.MAX_VALUE}, new long[] {Long.MAX_VALUE - 1, Long.MAX_VALUE},
                new long[] {-5, 3}, new long[] {-7, -6, -5}, new long[] {Long.MIN_VALUE, 0, Long.MAX_VALUE},
                new long[] {Long.MIN_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1, Long.MAX_VALUE})) {
                assertThat(PendingOffset.decode(PendingOffset.encode(seqs.clone(), seqs.length)))
                    .as(Arrays.toString(seqs)).containsExactly(seqs);
            }
        });
    }

    @Test
    void aPendingSetNamingMoreThanAValueMayIsRefusedBeforeItIsBuilt() {
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
            assertThatThrownBy(() -> PendingOffset.decode("1+9000000000000000000"))
                .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> PendingOffset.decode("9223372036854775800+100"))
                .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> PendingOffset.decode("1+" + PendingOffset.MAX_NAMES))
                .isInstanceOf(IllegalArgumentException.class);
        });
        assertThat(PendingOffset.decode("1+" + (PendingOffset.MAX_NAMES - 1))).hasSize(PendingOffset.MAX_NAMES);
    }

    @Test
    void theEncodingStaysUnderItsBoundForTheLargestClaimSpreadOverManyShares() {
        // outbox.batch.max.size 10,000 rows of one of 16 shares: the share's seqs interleave with the others'
        long[] seqs = LongStream.range(0, 10_000).map(i -> 1_000_000_000L + i * 16 + (i % 7)).toArray();
        String encoded = PendingOffset.encode(seqs, seqs.length);
        assertThat(encoded.length()).isLessThan(40_000);
        assertThat(PendingOffset.decode(encoded)).containsExactly(seqs);
    }

    @Test
    void aValueNamesAtMostItsBoundLeavingOutTheEarliest() {
        int n = PendingOffset.MAX_NAMES + 10;
        PendingRow last = row(n + 1, "order.created", ALL);
        BatchOffsets batch = new BatchOffsets("relay-0#a", 1, LongStream.rangeClosed(1, n).toArray(), List.of(last),
            false);
        Map<String, ?> value = batch.next(new PendingRow[] {last});
        batch.seal();
        assertThat(PendingOffset.decode((String) value.get("pending")))
            .hasSize(PendingOffset.MAX_NAMES).startsWith(12L).endsWith(n + 1L);
    }

    @Test
    void aRecordNamesTheEarlierRowsAndTheRowsCompleteAtIt() {
        PendingRow a = row(10, "order.created", ALL, ORDERS); // two records
        PendingRow b = row(11, "note.added", ALL);            // one record
        PendingRow none = row(12, "x.y");                     // no record: complete from the start
        BatchOffsets batch = new BatchOffsets("relay-0#a", 2, new long[] {5, 3}, List.of(a, b, none), false);
        Map<String, ?> first = batch.next(new PendingRow[] {a});
        Map<String, ?> second = batch.next(new PendingRow[] {a});
        Map<String, ?> third = batch.next(new PendingRow[] {b});
        batch.seal();
        assertThat(Map.copyOf(first)).isEqualTo(Map.of("v", 1, "owner", "relay-0#a", "tasks", 2, "pending", "3,2,7"));
        assertThat(second.get("pending")).as("a is complete at its second record").isEqualTo("3,2,5,2");
        assertThat(third.get("pending")).isEqualTo("3,2,5+2");
    }

    @Test
    void aCoalescedRowIsCompleteOnlyAtTheRecordThatCoversIt() {
        PendingRow early = row(20, "order.created", ALL);
        PendingRow other = row(21, "order.created", ALL);
        PendingRow latest = row(22, "order.created", ALL);
        BatchOffsets batch = new BatchOffsets("o", 1, new long[0], List.of(early, other, latest), false);
        Map<String, ?> atOther = batch.next(new PendingRow[] {other});
        Map<String, ?> atLatest = batch.next(new PendingRow[] {latest, early}); // coalesced: covers 20
        batch.seal();
        assertThat(atOther.get("pending")).isEqualTo("21");
        assertThat(atLatest.get("pending")).isEqualTo("20+2");
    }

    @Test
    void withConnectorBoundariesEveryRecordCarriesTheWholeListsOffset() {
        PendingRow a = row(1, "order.created", ALL, ORDERS);
        PendingRow b = row(2, "order.created", ALL);
        BatchOffsets batch = new BatchOffsets("o", 1, new long[] {0}, List.of(a, b), true);
        Map<String, ?> first = batch.next(new PendingRow[] {a});
        Map<String, ?> last = batch.next(new PendingRow[] {b});
        batch.seal();
        assertThat(first).isSameAs(last);
        assertThat(first.get("pending")).isEqualTo("0+2");
    }

    @Test
    void theValueIsComputedOnlyWhenFirstReadAndThenKept() {
        PendingRow a = row(1, "order.created", ALL);
        BatchOffsets batch = new BatchOffsets("o", 1, new long[0], List.of(a), false);
        ComputedOffset offset = (ComputedOffset) batch.next(new PendingRow[] {a});
        batch.seal();
        assertThat(offset.computed()).isFalse();
        assertThat(offset.get("pending")).isEqualTo("1");
        assertThat(offset.computed()).isTrue();
        assertThat(offset.get("owner")).isEqualTo("o");
    }

    @Test
    void aNamedSlotIsReadBackAndAnythingElseIsNot() {
        Map<String, Object> written = Map.of("v", 1L, "owner", "relay-0#a", "tasks", 4L, "pending", "3,2+1");
        PendingOffset.Named named = PendingOffset.Named.parse(written);
        assertThat(named.owner()).isEqualTo("relay-0#a");
        assertThat(named.tasks()).isEqualTo(4);
        assertThat(named.seqs()).containsExactly(3, 5, 6);
        assertThat(PendingOffset.Named.parse(Map.of("seq", 4L))).as("the old offset").isNull();
        assertThat(PendingOffset.Named.parse(Map.of("v", 2L, "owner", "x", "tasks", 1L, "pending", "")))
            .as("a later version").isNull();
    }

    private static PendingRow row(long seq, String type, Subscription... subscriptions) {
        return new PendingRow(new ClaimedRow(seq, "id-" + seq, type, "s", "{}", 0L, 1, null, 2, null, null, null, false),
            subscriptions);
    }
}
