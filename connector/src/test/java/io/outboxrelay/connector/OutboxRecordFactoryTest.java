package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.common.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.StringConverter;
import org.junit.jupiter.api.Test;

/**
 * Record building and coalescing as pure logic. The seed's regression: an early build coalesced for
 * every subscriber and dropped supplier.connected when supplier.activated followed in the same batch.
 */
class OutboxRecordFactoryTest {
    private static final Subscription WEBHOOKS = new Subscription("webhooks", "hooks", List.of("supplier.*"), false);
    private static final Subscription INDEX = new Subscription("corpus.index", "index", List.of("*"), true);

    private static ClaimedRow row(long seq, String type, String subject) {
        return new ClaimedRow(seq, "id-" + seq, type, subject, "{\"n\":" + seq + "}", 1_000L + seq, 1, null, 8,
            "object", new String[] {"traceparent"}, new String[] {"00-abc-01"}, false);
    }

    private static ClaimedRow occurredAt(long seq, long occurredAtMs) {
        return new ClaimedRow(seq, "id-" + seq, "supplier.connected", "supplier:" + seq, "{}", occurredAtMs, 1, null, 2,
            null, null, null, false);
    }

    private static List<SourceRecord> build(List<Subscription> subs, List<PendingRow> pending, ClaimedRow... rows) {
        OutboxRecordFactory f = new OutboxRecordFactory(subs, "events");
        for (ClaimedRow r : rows) {
            pending.add(f.pending(r));
        }
        List<SourceRecord> out = new ArrayList<>();
        f.records(pending, out);
        return out;
    }

    /**
     * A record's timestamp is occurred_at only where Kafka takes it: Connect refuses a negative one (before
     * 1970) outside errors.tolerance, and a broker rejects one more than log.message.timestamp.after.max.ms
     * (1 h) ahead, after the send. Such a row's records carry the time they were made; the envelope and
     * the event.occurred_at header keep the event's own time.
     */
    @Test
    void aTimestampKafkaWouldRefuseBecomesTheTimeTheRecordIsMadeWhileTheEnvelopeKeepsOccurredAt() {
        long before = System.currentTimeMillis();
        long y1900 = Instant.parse("1900-01-01T00:00:00Z").toEpochMilli();
        long twoHoursAhead = before + 7_200_000;
        long aMinuteAhead = before + 60_000;
        List<SourceRecord> records = build(List.of(WEBHOOKS), new ArrayList<>(), occurredAt(1, y1900),
            occurredAt(2, twoHoursAhead), occurredAt(3, aMinuteAhead), occurredAt(4, 0), occurredAt(5, -1));
        long after = System.currentTimeMillis();

        assertThat(records.get(0).timestamp()).isBetween(before, after);
        assertThat(records.get(1).timestamp()).isBetween(before, after);
        assertThat(records.get(2).timestamp()).as("a little ahead: the writer's clock").isEqualTo(aMinuteAhead);
        assertThat(records.get(3).timestamp()).as("the epoch itself is a timestamp").isZero();
        assertThat(records.get(4).timestamp()).as("-1 is Kafka's 'no timestamp'").isBetween(before, after);
        assertThat(((Struct) records.get(0).value()).get("occurred_at")).isEqualTo(new java.util.Date(y1900));
        assertThat(((Struct) records.get(1).value()).get("occurred_at")).isEqualTo(new java.util.Date(twoHoursAhead));
    }

    @Test
    void everyEventOfASubjectReachesANonCoalescingSubscriber() {
        List<PendingRow> pending = new ArrayList<>();
        List<SourceRecord> records = build(List.of(WEBHOOKS, INDEX), pending,
            row(1, "supplier.connected", "supplier:42"), row(2, "supplier.activated", "supplier:42"));

        List<String> hooks = records.stream().filter(r -> r.topic().equals("hooks"))
            .map(r -> ((Struct) r.value()).getString("type")).toList();
        assertThat(hooks).containsExactly("supplier.connected", "supplier.activated");

        List<SourceRecord> index = records.stream().filter(r -> r.topic().equals("index")).toList();
        assertThat(index).hasSize(1);
        Struct latest = (Struct) index.get(0).value();
        assertThat(latest.getString("type")).isEqualTo("supplier.activated");
        assertThat(latest.<Long>getArray("coalesced_seqs")).containsExactly(1L, 2L);
        assertThat(((Struct) records.get(0).value()).getArray("coalesced_seqs")).isNull();
    }

    @Test
    void negativeControlCoalescingEverySubscriptionDropsTheEarlierFact() {
        Subscription coalescingHooks = new Subscription("webhooks", "hooks", List.of("supplier.*"), true);
        List<PendingRow> pending = new ArrayList<>();
        List<SourceRecord> records = build(List.of(coalescingHooks, INDEX), pending,
            row(1, "supplier.connected", "supplier:42"), row(2, "supplier.activated", "supplier:42"));
        List<String> hooks = records.stream().filter(r -> r.topic().equals("hooks"))
            .map(r -> ((Struct) r.value()).getString("type")).toList();
        assertThat(hooks).doesNotContain("supplier.connected");
    }

    @Test
    void theCoveringRecordsAckSettlesTheCoveredRowsAsCoalescedInto() {
        List<PendingRow> pending = new ArrayList<>();
        List<SourceRecord> records = build(List.of(INDEX), pending,
            row(1, "note.created", "note:1"), row(2, "note.updated", "note:1"), row(3, "note.created", "note:2"));
        assertThat(records).hasSize(2);
        FanOutAckTracker tracker = new FanOutAckTracker(false, () -> { });
        pending.forEach(tracker::track);
        for (SourceRecord r : records) {
            tracker.onCommit((OutboxRecord) r, new RecordMetadata(new TopicPartition("index", 0), 7, 0, 0, 0, 0));
        }
        List<PendingRow> settled = tracker.drainSettled();
        assertThat(settled).extracting(PendingRow::seq).containsExactlyInAnyOrder(1L, 2L, 3L);
        PendingRow first = pending.get(0);
        assertThat(first.fanoutJson()).isEqualTo("{\"corpus.index\":{\"coalesced_into\":2}}");
        assertThat(pending.get(1).fanoutJson())
            .isEqualTo("{\"corpus.index\":{\"topic\":\"index\",\"partition\":0,\"offset\":7}}");
    }

    /**
     * A retried row comes first in a claim (rows attempted before are claimed ahead of fresh ones), so a
     * requeued row 10 can follow a retried row 30 of the same subject in one pass. The latest event is the
     * highest seq, whatever the list order, and every subscriber sees the subject's events in seq order.
     */
    @Test
    void theHighestSeqCoversTheSubjectAndRecordsFollowSeqOrderWhateverTheClaimOrder() {
        List<PendingRow> pending = new ArrayList<>();
        List<SourceRecord> records = build(List.of(WEBHOOKS, INDEX), pending,
            row(30, "supplier.activated", "supplier:7"), row(10, "supplier.connected", "supplier:7"));

        List<SourceRecord> index = records.stream().filter(r -> r.topic().equals("index")).toList();
        assertThat(index).hasSize(1);
        Struct latest = (Struct) index.get(0).value();
        assertThat(latest.getInt64("seq")).isEqualTo(30L);
        assertThat(latest.<Long>getArray("coalesced_seqs")).containsExactly(10L, 30L);
        assertThat(records.stream().filter(r -> r.topic().equals("hooks"))
            .map(r -> ((Struct) r.value()).getInt64("seq")).toList()).containsExactly(10L, 30L);

        FanOutAckTracker tracker = new FanOutAckTracker(false, () -> { });
        pending.forEach(tracker::track);
        for (SourceRecord r : records) {
            tracker.onCommit((OutboxRecord) r, new RecordMetadata(new TopicPartition(r.topic(), 0), 4, 0, 0, 0, 0));
        }
        PendingRow row10 = pending.stream().filter(p -> p.seq() == 10).findFirst().orElseThrow();
        PendingRow row30 = pending.stream().filter(p -> p.seq() == 30).findFirst().orElseThrow();
        assertThat(row10.fanoutJson()).contains("\"corpus.index\":{\"coalesced_into\":30}");
        assertThat(row30.fanoutJson()).contains("\"corpus.index\":{\"topic\":\"index\"");
    }

    @Test
    void recordsCarryKeyTimestampAndHeadersOfTheContract() {
        List<SourceRecord> records = build(List.of(WEBHOOKS), new ArrayList<>(), row(5, "supplier.connected", "s:1"));
        SourceRecord r = records.get(0);
        assertThat(r.key()).isEqualTo("s:1");
        assertThat(r.timestamp()).isEqualTo(1_005L);
        assertThat(r.headers().lastWithName("event.id").value()).isEqualTo("id-5");
        assertThat(r.headers().lastWithName("event.type").value()).isEqualTo("supplier.connected");
        assertThat(r.headers().lastWithName("subscription").value()).isEqualTo("webhooks");
        assertThat(r.headers().lastWithName("traceparent").value()).isEqualTo("00-abc-01");
        Struct v = (Struct) r.value();
        assertThat(v.getString("payload")).isEqualTo("{\"n\":5}");
        assertThat(v.getInt64("seq")).isEqualTo(5L);
    }

    @Test
    void aRowIsNotSettledUntilEverySubscriberAckedAndANullAckUnderToleranceAllFailsIt() {
        List<PendingRow> pending = new ArrayList<>();
        Subscription mail = new Subscription("mail", "mail", List.of("*"), false);
        List<SourceRecord> records = build(List.of(WEBHOOKS, mail), pending, row(9, "supplier.connected", "s:9"));
        FanOutAckTracker tracker = new FanOutAckTracker(true, () -> { });
        pending.forEach(tracker::track);
        tracker.onCommit((OutboxRecord) records.get(0), new RecordMetadata(new TopicPartition("hooks", 1), 3, 0, 0, 0, 0));
        assertThat(tracker.drainSettled()).isEmpty();
        tracker.onCommit((OutboxRecord) records.get(1), null);
        List<PendingRow> settled = tracker.drainSettled();
        assertThat(settled).hasSize(1);
        assertThat(settled.get(0).failed()).isTrue();
        assertThat(settled.get(0).failure()).contains("mail").contains("errors.tolerance=all");
    }

    // ---- record shapes (value.format, headers.format) ----

    private static final String PAYLOAD = "{\"name\": \"Zoë \\\"ACME\\\"\", \"tags\": [1, 2.5, null, true], \"big\": 123456789012345678901234}";

    private static RecordShape shape(String valueFormat, boolean cloudEvents) {
        return new RecordShape(RecordShape.ValueFormat.of(valueFormat), cloudEvents, cloudEvents ? "/outbox/test" : "");
    }

    private static List<SourceRecord> build(RecordShape shape, List<Subscription> subs, ClaimedRow... rows) {
        OutboxRecordFactory f = new OutboxRecordFactory(subs, "events", shape);
        List<PendingRow> pending = new ArrayList<>();
        for (ClaimedRow r : rows) {
            pending.add(f.pending(r));
        }
        List<SourceRecord> out = new ArrayList<>();
        f.records(pending, out);
        return out;
    }

    private static ClaimedRow payloadRow(long seq, String subject) {
        return new ClaimedRow(seq, "id-" + seq, "supplier.connected", subject, PAYLOAD, 1_700_000_000_123L, 1, null,
            Json.utf8Length(PAYLOAD), "object", new String[] {"traceparent"}, new String[] {"00-abc-01"},
            false);
    }

    private static String header(SourceRecord r, String name) {
        Header h = r.headers().lastWithName(name);
        return h == null ? null : String.valueOf(h.value());
    }

    private static byte[] convert(Converter converter, Map<String, String> props, SourceRecord r) {
        converter.configure(props, false);
        return converter.fromConnectData(r.topic(), r.valueSchema(), r.value());
    }

    @Test
    void payloadWithStringConverterIsTheCommittedTextByteForByte() {
        SourceRecord r = build(shape("payload", false), List.of(WEBHOOKS), payloadRow(5, "s:1")).get(0);
        assertThat(new String(convert(new StringConverter(), Map.of(), r), StandardCharsets.UTF_8)).isEqualTo(PAYLOAD);
        assertThat(r.key()).isEqualTo("s:1");
        assertThat(r.timestamp()).isEqualTo(1_700_000_000_123L);
    }

    @Test
    void payloadBytesWithByteArrayConverterIsTheCommittedTextByteForByte() {
        SourceRecord r = build(shape("payload.bytes", false), List.of(WEBHOOKS), payloadRow(5, "s:1")).get(0);
        assertThat(convert(new ByteArrayConverter(), Map.of(), r)).isEqualTo(PAYLOAD.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void payloadJsonWithSchemalessJsonConverterIsAnObjectNotAnEscapedString() throws Exception {
        SourceRecord r = build(shape("payload.json", false), List.of(WEBHOOKS), payloadRow(5, "s:1")).get(0);
        byte[] bytes = convert(new JsonConverter(), Map.of("schemas.enable", "false"), r);
        JsonNode written = new ObjectMapper().readTree(bytes);
        assertThat(written.isObject()).isTrue();
        assertThat(written.get("name").asText()).isEqualTo("Zoë \"ACME\"");
        assertThat(written.get("tags").toString()).isEqualTo("[1,2.5,null,true]");
        // beyond a long: a double, as JsonConverter writes no other number schemaless
        assertThat(written.get("big").asDouble()).isEqualTo(1.2345678901234568E23);
        assertThat(new ObjectMapper().readTree(PAYLOAD).get("name")).isEqualTo(written.get("name"));
    }

    @Test
    void payloadFormatsCarryTheMetadataInHeaders() {
        for (String format : List.of("payload", "payload.bytes", "payload.json")) {
            SourceRecord r = build(shape(format, false), List.of(WEBHOOKS), payloadRow(5, "s:1")).get(0);
            assertThat(header(r, "event.id")).as(format).isEqualTo("id-5");
            assertThat(header(r, "event.type")).as(format).isEqualTo("supplier.connected");
            assertThat(header(r, "subscription")).as(format).isEqualTo("webhooks");
            assertThat(header(r, "event.seq")).as(format).isEqualTo("5");
            assertThat(header(r, "event.subject")).as(format).isEqualTo("s:1");
            assertThat(header(r, "event.occurred_at")).as(format).isEqualTo("2023-11-14T22:13:20.123Z");
            assertThat(header(r, "event.coalesced_seqs")).as(format).isNull();
            assertThat(header(r, "traceparent")).as(format).isEqualTo("00-abc-01");
            assertThat(header(r, "ce_id")).as(format).isNull();
        }
    }

    @Test
    void theEnvelopeKeepsTodaysHeadersOnly() {
        SourceRecord r = build(RecordShape.ENVELOPE, List.of(WEBHOOKS), payloadRow(5, "s:1")).get(0);
        List<String> names = new ArrayList<>();
        r.headers().forEach(h -> names.add(h.key()));
        assertThat(names).containsExactly("event.id", "event.type", "subscription", "traceparent");
        assertThat(r.valueSchema()).isSameAs(OutboxRecordFactory.VALUE_SCHEMA);
    }

    @Test
    void aCoalescedPayloadRecordListsTheSeqsItCoversInAHeader() {
        List<SourceRecord> records = build(shape("payload", false), List.of(INDEX), payloadRow(3, "s:1"),
            payloadRow(8, "s:1"));
        assertThat(records).hasSize(1);
        assertThat(header(records.get(0), "event.seq")).isEqualTo("8");
        assertThat(header(records.get(0), "event.coalesced_seqs")).isEqualTo("3,8");
    }

    @Test
    void cloudEventsHeadersFollowTheKafkaBindingsBinaryMode() {
        SourceRecord r = build(shape("payload", true), List.of(WEBHOOKS), payloadRow(5, "s:1")).get(0);
        assertThat(header(r, "ce_specversion")).isEqualTo("1.0");
        assertThat(header(r, "ce_id")).isEqualTo("id-5");
        assertThat(header(r, "ce_type")).isEqualTo("supplier.connected");
        assertThat(header(r, "ce_source")).isEqualTo("/outbox/test");
        assertThat(header(r, "ce_time")).isEqualTo("2023-11-14T22:13:20.123Z");
        assertThat(header(r, "ce_subject")).isEqualTo("s:1");
        assertThat(header(r, "content-type")).isEqualTo("application/json");

        SourceRecord envelope = build(shape("envelope", true), List.of(WEBHOOKS), payloadRow(5, "s:1")).get(0);
        assertThat(header(envelope, "ce_id")).isEqualTo("id-5");
        assertThat(header(envelope, "content-type")).as("the envelope's content type is the converter's").isNull();
    }

    @Test
    void everyHeaderTheRelayWritesIsReservedUnderThatShape() {
        for (String format : RecordShape.ValueFormat.configNames()) {
            for (boolean ce : List.of(false, true)) {
                RecordShape shape = shape(format, ce);
                ClaimedRow bare = new ClaimedRow(9, "id-9", "t", "s", "{}", 1L, 1, null, 2, null, null, null, false);
                for (SourceRecord r : build(shape, List.of(INDEX), payloadRow(3, "s"), payloadRow(4, "s"), bare)) {
                    List<String> written = new ArrayList<>();
                    r.headers().forEach(h -> written.add(h.key()));
                    written.remove("traceparent"); // the row's own
                    assertThat(shape.reservedHeaders()).as("%s ce=%s", format, ce).containsAll(written);
                }
            }
        }
        assertThat(RecordShape.ENVELOPE.reservedHeaders()).as("a writer's own CloudEvents headers stay allowed")
            .doesNotContain("content-type", "ce_id");
        assertThat(RecordShape.ENVELOPE.reservedHeaders()).as("the envelope writes these in its fields, not headers")
            .doesNotContain("event.seq", "event.subject", "event.occurred_at", "event.coalesced_seqs");
    }
}
