package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.MutableClock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The relay task with a replay request (docs/replay.md) on in-memory stores: the live claim goes first and keeps
 * its rows and stamps, the replay chunk comes after it in the same list, acknowledgements of the two never mix,
 * a failing replay never backs the live relay off, and a stop gives the request back.
 */
class ReplayRelayTaskTest {
    private static final long LEASE_MS = 3_000;

    private final MutableClock clock = new MutableClock(Instant.ofEpochMilli(1_000_000));
    private final FakeOutboxStore store = new FakeOutboxStore(clock::millis, LEASE_MS);
    private FakeReplayStore replays;
    private OutboxRelayTask task;

    @AfterEach
    void stopTask() {
        if (task != null) {
            task.stop();
        }
    }

    private void start() {
        Map<String, String> props = new HashMap<>(Map.of(
            "name", "relay", "connection.url", "jdbc:postgresql://localhost/test", "subscriptions", "orders,search",
            "outbox.listen.enabled", "false", "outbox.lease.ms", Long.toString(LEASE_MS),
            "outbox.backoff.initial.ms", "2000", "outbox.poll.interval.ms", "1000",
            "outbox.replay.check.interval.ms", "1000"));
        task = new OutboxRelayTask(clock, (config, incarnation, onNotify, onListening) -> {
            replays = new FakeReplayStore(store.owner(), List.of("orders", "search"));
            replays.request(1, "search", 0, 2);
            replays.row(1, "order.created", "a");
            replays.row(2, "order.paid", "a");
            return RelayBackend.of(store, replays, () -> { }, () -> { });
        });
        task.start(props);
    }

    private static RecordMetadata at(long offset) {
        return new RecordMetadata(new TopicPartition("t", 0), offset, 0, 0, 0, 0);
    }

    private static List<Long> seqs(List<SourceRecord> records) {
        return records.stream().map(r -> ((Struct) r.value()).getInt64("seq")).toList();
    }

    @Test
    void theReplayChunkFollowsTheLiveClaimAndTheirAcknowledgementsNeverMix() throws Exception {
        store.insert(3, "b");
        start();

        List<SourceRecord> records = task.poll();

        assertThat(records).extracting(SourceRecord::topic).containsExactly("orders", "search", "search", "search");
        assertThat(seqs(records)).containsExactly(3L, 3L, 1L, 2L);
        assertThat(records.subList(0, 2)).allSatisfy(r -> assertThat(r).isInstanceOf(OutboxRecord.class));
        assertThat(records.subList(2, 4)).allSatisfy(r -> assertThat(r).isInstanceOf(ReplayRecord.class));

        records.forEach(r -> task.commitRecord(r, at(1)));
        clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MS);
        task.poll();

        assertThat(store.row(3).fanout).as("the live row is stamped for its two live records only")
            .contains("\"orders\"").contains("\"search\"");
        FakeReplayStore.Req request = replays.requests.get(1L);
        assertThat(request.done).isTrue();
        assertThat(request.sent).isEqualTo(2);
    }

    @Test
    void aFailingReplayStatementNeverBacksTheLiveRelayOff() throws Exception {
        start();
        replays.failNext("57014"); // a statement timeout on the requests
        assertThat(task.poll()).isNull();

        store.insert(4, "c");
        clock.advance(1_000);
        List<SourceRecord> records = task.poll();
        assertThat(seqs(records)).as("the live claim at once, no backoff").startsWith(4L, 4L);
    }

    @Test
    void aStopGivesTheRequestBack() throws Exception {
        start();
        List<SourceRecord> records = task.poll();
        assertThat(records).hasSize(2);
        assertThat(replays.requests.get(1L).leaseOwner).isEqualTo(store.owner());

        task.stop();
        task = null;

        assertThat(replays.requests.get(1L).leaseOwner).isNull();
        assertThat(replays.requests.get(1L).progressSeq).as("its chunk in flight is sent again").isZero();
    }
}
