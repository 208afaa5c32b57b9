package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
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

    private static List<SourceRecord> build(List<Subscription> subs, List<PendingRow> pending, ClaimedRow... rows) {
        OutboxRecordFactory f = new OutboxRecordFactory(subs, "events");
        for (ClaimedRow r : rows) {
            pending.add(f.pending(r));
        }
        List<SourceRecord> out = new ArrayList<>();
        f.records(pending, out);
        return out;
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
}
