package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Write receipts fit NOTIFY's payload limit whatever the ids are, and carry each id once. */
class ReceiptChunksTest {
    private static void assertFitsAndKeepsEveryId(List<String> ids, List<String> chunks) {
        assertThat(chunks).allSatisfy(c -> assertThat(c.getBytes(StandardCharsets.UTF_8).length)
            .isLessThanOrEqualTo(JdbcOutboxStore.RECEIPT_PAYLOAD_MAX_BYTES));
        List<String> back = new ArrayList<>();
        chunks.forEach(c -> back.addAll(Arrays.asList(c.split(","))));
        assertThat(back).containsExactlyElementsOf(ids);
    }

    @Test
    void uuidsFillAChunkAndTheRestGoesInTheNext() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            ids.add(UUID.randomUUID().toString());
        }
        List<String> chunks = JdbcOutboxStore.receiptChunks(ids);
        assertThat(chunks).hasSize(2);
        assertThat(chunks.get(0).split(",")).hasSize((JdbcOutboxStore.RECEIPT_PAYLOAD_MAX_BYTES + 1) / 37);
        assertFitsAndKeepsEveryId(ids, chunks);
    }

    @Test
    void longerMappedIdsAndMultiByteCharactersAreCountedInBytes() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            ids.add("order.created:" + UUID.randomUUID() + ":\u00e9\u20ac" + i); // about 60 bytes each
        }
        assertFitsAndKeepsEveryId(ids, JdbcOutboxStore.receiptChunks(ids));
    }

    @Test
    void anIdTooLongForAnyPayloadGetsNoReceiptAndTheOthersDo() {
        String huge = "x".repeat(JdbcOutboxStore.RECEIPT_PAYLOAD_MAX_BYTES + 1);
        List<String> chunks = JdbcOutboxStore.receiptChunks(List.of("a", huge, "b"));
        assertThat(chunks).containsExactly("a,b");
        assertThat(JdbcOutboxStore.receiptChunks(List.of())).isEmpty();
    }
}
