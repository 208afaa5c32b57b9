package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.Backoff;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The rejection rules applied to a claimed row before any of its records is produced, as pure logic. */
class RejectionRulesTest {
    private static final OutboxSourceConnectorConfig CONFIG = new OutboxSourceConnectorConfig(Map.of(
        "connection.url", "jdbc:postgresql://localhost/app", "subscriptions", "webhooks"));

    private static final RejectionRules RULES = new RejectionRules(CONFIG, new Backoff(1, 2));

    private static RejectionRules payloadJsonRules() {
        return new RejectionRules(new OutboxSourceConnectorConfig(Map.of(
            "connection.url", "jdbc:postgresql://localhost/app", "subscriptions", "webhooks",
            "value.format", "payload.json")), new Backoff(1, 2));
    }

    private static ClaimedRow rowWithHeader(String key) {
        return new ClaimedRow(12, "id-12", "order.created", "order:1", "{}", 0L, 1, null, 2, "object",
            new String[] {"traceparent", key}, new String[] {"00-ab-01", "forged"}, false);
    }

    @ParameterizedTest
    @ValueSource(strings = {"event.id", "event.type", "subscription", "event.replay"})
    void aRowWhoseHeadersSetAHeaderTheRelayWritesIsRejectedWithTheFix(String reserved) {
        assertThat(RULES.beforeProducing(rowWithHeader(reserved)))
            .contains("'" + reserved + "'").contains("SELECT events_requeue(12)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"event.source", "Event.ID", "x-subscription"})
    void otherHeaderNamesPass(String key) {
        assertThat(RULES.beforeProducing(rowWithHeader(key))).isNull();
    }

    /** The envelope carries seq, subject and occurred_at in its fields: a row's header of that name goes out as is. */
    @ParameterizedTest
    @ValueSource(strings = {"event.seq", "event.subject", "event.occurred_at", "event.coalesced_seqs"})
    void aHeaderOnlyThePayloadFormatsWriteIsTheRowsOwnUnderTheEnvelopeAndRejectedUnderThem(String key) {
        assertThat(RULES.beforeProducing(rowWithHeader(key))).isNull();
        assertThat(payloadJsonRules().beforeProducing(rowWithHeader(key))).contains("'" + key + "'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"deep", "long-number"})
    void aPayloadPayloadJsonCannotTurnIntoARecordIsRejectedNotLeftToFailTheTask(String kind) {
        RejectionRules rules = payloadJsonRules();
        // both are valid jsonb, beyond what Jackson reads by default
        String payload = kind.equals("deep") ? "[".repeat(1_200) + "]".repeat(1_200) : "{\"n\": 1" + "0".repeat(1_100) + "}";
        ClaimedRow row = new ClaimedRow(13, "id-13", "order.created", "order:1", payload, 0L, 1, null, payload.length(),
            null, null, null, false);
        assertThat(rules.beforeProducing(row)).contains("value.format=payload.json").contains("events_requeue(13)");
        assertThat(RULES.beforeProducing(row)).as("the envelope carries the payload as text: no limit").isNull();
        assertThat(rules.beforeProducing(new ClaimedRow(14, "id-14", "order.created", "order:1", "{\"n\": [1, 2]}", 0L,
            1, null, 14, null, null, null, false))).isNull();
    }

    /**
     * A text or varchar payload column (validation allows them) can hold what is not one JSON value: an empty text
     * was rejected as "JSON null", text after the value was dropped without a word, a number past a double's range
     * went out as "Infinity".
     */
    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "{\"a\": 1} trailing", "{\"a\": 1}{}", "[1] 2", "1e400", "[1e-400]",
        "{\"n\": -1e999}"})
    void aTextPayloadThatIsNotExactlyOneJsonValueIsRejectedForWhatItIs(String payload) {
        ClaimedRow row = new ClaimedRow(16, "id-16", "order.created", "order:1", payload, 0L, 1, null,
            payload.length(), null, null, null, false);
        assertThat(payloadJsonRules().beforeProducing(row)).contains("value.format=payload.json")
            .doesNotContain("JSON null").contains("events_requeue(16)");
    }

    @Test
    void ordinaryNumbersOfEveryKindPassAndBecomeLongsOrDoubles() {
        String payload = "{\"a\": 0.1, \"b\": 0.0, \"c\": -2.5e3, \"d\": 1e308, \"e\": -0, \"f\": 12}";
        ClaimedRow row = new ClaimedRow(18, "id-18", "order.created", "order:1", payload, 0L, 1, null,
            payload.length(), null, null, null, false);
        assertThat(payloadJsonRules().beforeProducing(row)).isNull();
        assertThat(PayloadJson.parse(payload)).isEqualTo(java.util.Map.of("a", 0.1, "b", 0.0, "c", -2500.0, "d", 1e308,
            "e", 0L, "f", 12L));
    }

    /** A row's last error may be any size (each poison and requeue adds to it): its reason keeps a bounded part. */
    @Test
    void aRowsEarlierErrorIsCutInTheReasonThatQuotesIt() {
        String huge = "x".repeat(2_000_000);
        ClaimedRow row = new ClaimedRow(17, "id-17", "order.created", "order:1", null, 0L, 99, huge, 2, null, null,
            null, false);
        String reason = RULES.beforeProducing(row);
        assertThat(reason).contains("claimed 99 times").endsWith("…")
            .hasSizeLessThan(JdbcOutboxStore.POISONED_TEXT_MAX_CHARS + 1_000);
        assertThat(RejectionRules.cut("😀".repeat(1_000))).endsWith("…").doesNotContain("\uFFFD")
            .satisfies(c -> assertThat(Character.isHighSurrogate(c.charAt(c.length() - 2))).isFalse());
    }

    @ParameterizedTest
    @ValueSource(longs = {Long.MAX_VALUE, Long.MIN_VALUE})
    void aRowWhoseOccurredAtIsInfiniteIsRejectedWithTheFix(long infinity) {
        ClaimedRow row = new ClaimedRow(15, "id-15", "order.created", "order:1", "{}", infinity, 1, null, 2, null, null,
            null, false);
        assertThat(RULES.beforeProducing(row)).contains("occurred_at").contains("infinity")
            .contains("events_requeue(15)");
    }

    /** A null record value is a tombstone: on a compacted topic it deletes the subject's key. */
    @ParameterizedTest
    @ValueSource(strings = {"null", " null "})
    void aJsonNullPayloadIsNeverSentAsANullValue(String payload) {
        RejectionRules rules = payloadJsonRules();
        ClaimedRow row = new ClaimedRow(16, "id-16", "order.created", "order:1", payload, 0L, 1, null, 4, null, null,
            null, false);
        assertThat(rules.beforeProducing(row)).contains("JSON null").contains("tombstone")
            .contains("events_requeue(16)");
        assertThat(RULES.beforeProducing(row)).as("the envelope carries the text null").isNull();
    }
}
