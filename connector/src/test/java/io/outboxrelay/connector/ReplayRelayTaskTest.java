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
        start(null, Map.of());
    }

    /** A task with {@code context} (null: none), on the same stores as the tasks before it. */
    private void start(FakeTaskContext context, Map<String, String> overrides) {
        Map<String, String> props = new HashMap<>(Map.of(
            "name", "relay", "connection.url", "jdbc:postgresql://localhost/test", "subscriptions", "orders,search",
            "outbox.listen.enabled", "false", "outbox.lease.ms", Long.toString(LEASE_MS),
            "outbox.backoff.initial.ms", "2000", "outbox.poll.interval.ms", "1000",
            "outbox.replay.check.interval.ms", "1000"));
        props.putAll(overrides);
        task = new OutboxRelayTask(clock, (config, incarnation, onNotify, onListening) -> {
            if (replays == null) {
                replays = new FakeReplayStore(store.owner(), List.of("orders", "search"));
                replays.request(1, "search", 0, 2);
                replays.row(1, "order.created", "a");
                replays.row(2, "order.paid", "a");
            }
            return RelayBackend.of(store, replays, ClaimPacer.Listener.NONE, () -> { });
        });
        if (context != null) {
            task.initialize(context);
        }
        task.start(props);
    }

    private static RecordMetadata at(long offset) {
        return new RecordMetadata(new TopicPartition("t", 0), offset, 0, 0, 0, 0);
    }

    /** Under value.format=payload.json the value is the payload: the event is named by its header. */
    private static List<String> ids(List<SourceRecord> records) {
        return records.stream().map(r -> (String) r.headers().lastWithName("event.id").value()).toList();
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

    /**
     * A replayed row passes the live rows' rules: one fanned out under another value.format may be one that
     * value.format=payload.json cannot send (a JSON null would be a tombstone, a payload it cannot parse threw out of
     * poll() and failed the task at every restart). It is skipped with a WARN; the rows after it are replayed.
     */
    @Test
    void aReplayedRowTheLiveRulesRefuseIsSkippedAndTheOthersAreReplayed() throws Exception {
        replays = new FakeReplayStore(store.owner(), List.of("orders", "search"));
        replays.request(1, "search", 0, 3);
        replays.row(1, "order.created", "a", "null");
        replays.row(2, "order.paid", "a", "{\"deep\": " + "[".repeat(1_100) + "]".repeat(1_100) + "}");
        replays.row(3, "order.paid", "a", "{\"n\": 3}");
        start(null, Map.of("value.format", "payload.json"));

        List<SourceRecord> records = task.poll();

        assertThat(records).allSatisfy(r -> assertThat(r).isInstanceOf(ReplayRecord.class));
        assertThat(ids(records)).containsExactly("id-3");
        records.forEach(r -> task.commitRecord(r, at(1)));
        task.poll();
        assertThat(replays.requests.get(1L).done).isTrue();
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

    /**
     * The chunk's transaction commits, with its records' source offset, and the task dies before it writes the
     * request's progress: the task that takes the request over reads the offset and sends none of it again.
     */
    @Test
    void aTaskThatDiesAfterTheChunksCommitIsFollowedByOneThatDoesNotSendItAgain() throws Exception {
        FakeTaskContext context = new FakeTaskContext(true);
        start(context, Map.of());
        List<SourceRecord> records = task.poll();
        assertThat(seqs(records)).containsExactly(1L, 2L);
        context.commit(task, records);
        task = null; // killed: no stop, no progress written
        replays.requests.get(1L).leaseOwner = null; // its lease ran out

        start(context, Map.of());
        assertThat(task.poll()).as("nothing produced again").isNull();
        assertThat(replays.requests.get(1L).done).isTrue();
    }

    /** The same under errors.tolerance=all, whose offsets are not trusted: the chunk goes again (at least once). */
    @Test
    void negativeControlUnderToleranceAllTheCommittedChunkIsSentAgain() throws Exception {
        FakeTaskContext context = new FakeTaskContext(false);
        start(context, Map.of("errors.tolerance", "all"));
        List<SourceRecord> records = task.poll();
        context.commit(task, records);
        task = null;
        replays.requests.get(1L).leaseOwner = null;

        start(context, Map.of("errors.tolerance", "all"));
        assertThat(seqs(task.poll())).containsExactly(1L, 2L);
    }
}
