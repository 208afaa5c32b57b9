package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

/** Replay to one subscription, one chunk at a time, against the in-memory requests of {@link FakeReplayStore}. */
class ReplayPassTest {
    private static final String OWNER = "relay-0#ab";
    private static final Subscription INDEX = new Subscription("corpus.index", "index-topic", List.of("order.*"), false);
    private static final Subscription HOOKS = new Subscription("webhooks", "hooks-topic", List.of("*"), false);
    private static final Subscription DIGEST = new Subscription("digest", "digest-topic", List.of("*"), true);
    private final FakeReplayStore store = new FakeReplayStore(OWNER, List.of("corpus.index", "webhooks", "digest"));
    private final AtomicInteger wakes = new AtomicInteger();
    private long now = 1_000;

    private ReplayPass pass(int chunkRows, boolean toleratesAll) {
        List<Subscription> subs = List.of(INDEX, HOOKS, DIGEST);
        return new ReplayPass(store, subs, new OutboxRecordFactory(subs, "events"),
            new ReplayPass.Settings("events", chunkRows, 5_000, 2_000, 60_000, toleratesAll), wakes::incrementAndGet);
    }

    /** A pass of the webhooks subscription alone that reads committed progress from {@code committed}. */
    private ReplayPass hooksOnly(java.util.function.LongUnaryOperator committed) {
        List<Subscription> subs = List.of(HOOKS);
        return new ReplayPass(store, subs, new OutboxRecordFactory(subs, "events"),
            new ReplayPass.Settings("events", 10, 5_000, 2_000, 60_000, false), () -> { }, committed,
            ClaimedRow::unreadable);
    }

    /** A request of one row to webhooks, whose first statement fails with {@code sqlState}. */
    private ReplayPass oneRowFailingFirst(long id, String sqlState) {
        store.request(id, "webhooks", 0, 1);
        store.row(1, "order.created", "o");
        store.failNext(sqlState);
        return pass(10, false);
    }

    private List<SourceRecord> run(ReplayPass pass) {
        List<SourceRecord> out = new ArrayList<>();
        pass.run(out, now);
        return out;
    }

    private static RecordMetadata at(long offset) {
        return new RecordMetadata(new TopicPartition("t", 0), offset, 0, 0, 0, 0);
    }

    private static void ackAll(ReplayPass pass, List<SourceRecord> records) {
        records.forEach(r -> pass.acknowledged((ReplayRecord) r, at(1)));
    }

    private static List<Long> seqs(List<SourceRecord> records) {
        return records.stream().map(r -> ((Struct) r.value()).getInt64("seq")).toList();
    }

    @Test
    void aChunkGoesToTheRequestsSubscriptionOnlyEachRecordNamingTheRequest() {
        store.request(7, "webhooks", 0, 3);
        store.row(1, "order.created", "o-1");
        store.row(2, "note.added", "n-1");
        store.row(3, "order.paid", "o-1");
        ReplayPass pass = pass(10, false);

        List<SourceRecord> records = run(pass);

        assertThat(seqs(records)).containsExactly(1L, 2L, 3L);
        assertThat(records).allSatisfy(r -> {
            assertThat(r.topic()).isEqualTo("hooks-topic");
            assertThat(r.headers().lastWithName("event.replay").value()).isEqualTo("7");
            assertThat(r.headers().lastWithName("subscription").value()).isEqualTo("webhooks");
            assertThat(r.sourcePartition()).isEqualTo(java.util.Map.of("outbox.replay", "events#7"));
        });
        assertThat(store.requests.get(7L).progressSeq).as("nothing acknowledged yet").isZero();

        ackAll(pass, records);
        assertThat(wakes.get()).as("the last acknowledgement wakes the task").isOne();
        assertThat(run(pass)).isEmpty();
        FakeReplayStore.Req req = store.requests.get(7L);
        assertThat(req.done).isTrue();
        assertThat(req.progressSeq).isEqualTo(3);
        assertThat(req.sent).isEqualTo(3);
        assertThat(req.leaseOwner).isNull();
    }

    @Test
    void progressMovesPastAChunkOnlyOnceEveryRecordOfItIsAcknowledged() {
        store.request(1, "webhooks", 0, 5);
        for (long seq = 1; seq <= 5; seq++) {
            store.row(seq, "order.created", "o-" + seq % 2);
        }
        ReplayPass pass = pass(2, false);

        List<SourceRecord> first = run(pass);
        assertThat(seqs(first)).containsExactly(1L, 2L);
        pass.acknowledged((ReplayRecord) first.get(0), at(1));
        assertThat(run(pass)).as("one chunk in flight at a time").isEmpty();
        assertThat(store.requests.get(1L).progressSeq).isZero();

        pass.acknowledged((ReplayRecord) first.get(1), at(2));
        List<SourceRecord> second = run(pass);
        assertThat(store.requests.get(1L).progressSeq).isEqualTo(2);
        assertThat(seqs(second)).containsExactly(3L, 4L);
        ackAll(pass, second);
        List<SourceRecord> third = run(pass);
        assertThat(seqs(third)).containsExactly(5L);
        ackAll(pass, third);
        run(pass);
        assertThat(store.requests.get(1L).done).isTrue();
        assertThat(store.requests.get(1L).sent).isEqualTo(5);
    }

    @Test
    void theSubscriptionsEventTypesApplyAndTheWalkStillMovesPastTheRest() {
        store.request(2, "corpus.index", 0, 4);
        store.row(1, "note.added", "n");
        store.row(2, "note.added", "n");
        store.row(3, "order.created", "o");
        store.row(4, "note.added", "n");
        ReplayPass pass = pass(2, false);

        List<SourceRecord> first = run(pass);
        assertThat(first).as("neither row of the first chunk is an order.*").isEmpty();
        assertThat(store.requests.get(2L).progressSeq).isEqualTo(2);
        List<SourceRecord> second = run(pass);
        assertThat(seqs(second)).containsExactly(3L);
        ackAll(pass, second);
        run(pass);
        assertThat(store.requests.get(2L).progressSeq).isEqualTo(4);
        assertThat(store.requests.get(2L).done).as("the empty chunk after the last ends the walk").isTrue();
        assertThat(store.requests.get(2L).sent).isOne();
    }

    @Test
    void aCoalescingSubscriptionGetsTheLatestEventOfASubjectPerChunk() {
        store.request(3, "digest", 0, 3);
        store.row(1, "order.created", "o-1");
        store.row(2, "order.paid", "o-1");
        store.row(3, "order.created", "o-2");
        ReplayPass pass = pass(10, false);

        List<SourceRecord> records = run(pass);

        assertThat(seqs(records)).containsExactly(2L, 3L);
        assertThat(((Struct) records.get(0).value()).getArray("coalesced_seqs")).containsExactly(1L, 2L);
        ackAll(pass, records);
        run(pass);
        assertThat(store.requests.get(3L).sent).isEqualTo(2);
    }

    @Test
    void aRecordNotDeliveredUnderToleranceAllSendsTheChunkAgain() {
        store.request(4, "webhooks", 0, 2);
        store.row(1, "order.created", "o");
        store.row(2, "order.paid", "o");
        ReplayPass pass = pass(10, true);

        List<SourceRecord> first = run(pass);
        pass.acknowledged((ReplayRecord) first.get(0), at(1));
        pass.acknowledged((ReplayRecord) first.get(1), null);
        assertThat(run(pass)).as("the retry waits outbox.backoff.initial.ms").isEmpty();
        assertThat(store.requests.get(4L).lastError).contains("not delivered");
        assertThat(store.requests.get(4L).progressSeq).isZero();

        now += 2_000;
        List<SourceRecord> again = run(pass);
        assertThat(seqs(again)).containsExactly(1L, 2L);
        ackAll(pass, again);
        run(pass);
        assertThat(store.requests.get(4L).done).isTrue();
    }

    @Test
    void aNullAcknowledgementUnderToleranceNoneIsAFilterAndCountsAsDelivered() {
        store.request(5, "webhooks", 0, 1);
        store.row(1, "order.created", "o");
        ReplayPass pass = pass(10, false);

        pass.acknowledged((ReplayRecord) run(pass).get(0), null);
        run(pass);
        assertThat(store.requests.get(5L).done).isTrue();
    }

    @Test
    void aCancelledRequestSendsNothingAfterItsChunkInFlight() {
        store.request(6, "webhooks", 0, 4);
        store.rows(4, "order.created", "o");
        ReplayPass pass = pass(2, false);
        List<SourceRecord> first = run(pass);
        store.requests.get(6L).cancelled = true; // SELECT events_replay_cancel(6)

        ackAll(pass, first);
        assertThat(run(pass)).isEmpty();
        assertThat(run(pass)).isEmpty();
        assertThat(store.requests.get(6L).progressSeq).as("a cancelled request is not written").isZero();
        assertThat(pass.inFlight()).isFalse();
    }

    @Test
    void aRequestForASubscriptionTheConnectorDoesNotServeStaysPending() {
        store.request(8, "search.v2", 0, 1);
        store.row(1, "order.created", "o");
        FakeReplayStore onlyHooks = new FakeReplayStore(OWNER, List.of("webhooks"));
        onlyHooks.requests.putAll(store.requests);
        onlyHooks.rows.addAll(store.rows);
        ReplayPass pass = new ReplayPass(onlyHooks, List.of(HOOKS), new OutboxRecordFactory(List.of(HOOKS), "events"),
            new ReplayPass.Settings("events", 10, 5_000, 2_000, 60_000, false), () -> { });

        assertThat(run(pass)).isEmpty();
        assertThat(store.requests.get(8L).leaseOwner).isNull();
        assertThat(store.requests.get(8L).done).isFalse();
    }

    @Test
    void aMissingRequestsTableTurnsReplayOffAndNeverFailsThePass() {
        ReplayPass pass = oneRowFailingFirst(9, "42P01");

        assertThat(run(pass)).isEmpty();
        now += 60_000;
        assertThat(run(pass)).isEmpty();
        assertThat(store.calls).containsExactly("claim");
    }

    @Test
    void aFailingStatementIsRetriedLaterAndNeverFailsThePass() {
        ReplayPass pass = oneRowFailingFirst(10, "08006");

        assertThat(run(pass)).isEmpty();
        assertThat(run(pass)).as("not before outbox.backoff.initial.ms").isEmpty();
        now += 2_000;
        assertThat(seqs(run(pass))).containsExactly(1L);
    }

    @Test
    void aStopGivesTheRequestBackForAnotherTaskToResumeFromItsProgress() {
        store.request(11, "webhooks", 0, 4);
        store.rows(4, "order.created", "o");
        ReplayPass pass = pass(2, false);
        ackAll(pass, run(pass));
        List<SourceRecord> inFlight = run(pass);
        assertThat(seqs(inFlight)).containsExactly(3L, 4L);

        pass.stop();

        FakeReplayStore.Req req = store.requests.get(11L);
        assertThat(req.leaseOwner).isNull();
        assertThat(req.progressSeq).as("the chunk in flight is sent again by whoever takes the request").isEqualTo(2);
    }

    @Test
    void noCheckBeforeTheIntervalWhileNoRequestIsOpen() {
        ReplayPass pass = pass(10, false);
        run(pass);
        run(pass);
        assertThat(store.calls).containsExactly("claim");
        store.request(12, "webhooks", 0, 1);
        store.row(1, "order.created", "o");
        now += 5_000;
        assertThat(seqs(run(pass))).containsExactly(1L);
    }

    private static List<Object> progressOffsets(List<SourceRecord> records) {
        return records.stream().map(r -> r.sourceOffset().get("progress")).map(Object.class::cast).toList();
    }

    @Test
    void eachRecordsOffsetNamesProgressOnlyAsFarAsItAndTheRecordsBeforeItCover() {
        store.request(13, "webhooks", 0, 3);
        store.request(14, "digest", 0, 3);
        store.request(15, "corpus.index", 0, 9);
        store.row(1, "order.created", "x");
        store.row(2, "note.added", "y");
        store.row(3, "order.paid", "x");
        store.row(4, "note.added", "y");
        ReplayPass pass = pass(4, false);

        List<SourceRecord> hooks = run(pass);
        assertThat(seqs(hooks)).containsExactly(1L, 2L, 3L);
        assertThat(progressOffsets(hooks)).containsExactly(1L, 2L, 3L);
        ackAll(pass, hooks);

        List<SourceRecord> digest = run(pass);
        assertThat(seqs(digest)).as("y's latest, then x's, which covers seq 1").containsExactly(2L, 3L);
        assertThat(progressOffsets(digest)).as("seq 1 is covered only by the second record").containsExactly(0L, 3L);
        ackAll(pass, digest);

        List<SourceRecord> index = run(pass);
        assertThat(seqs(index)).containsExactly(1L, 3L);
        assertThat(progressOffsets(index)).as("a full chunk: its last record names the chunk's last row")
            .containsExactly(2L, 4L);
        assertThat(index.get(0).sourcePartition()).isEqualTo(java.util.Map.of("outbox.replay", "events#15"));
    }

    @Test
    void aTaskThatTakesARequestOverGoesOnFromItsCommittedOffset() {
        store.request(16, "webhooks", 0, 5);
        store.rows(5, "order.created", "o");
        ReplayPass pass = hooksOnly(id -> id == 16 ? 3 : -1);

        List<SourceRecord> records = run(pass);

        assertThat(seqs(records)).as("seq 1 to 3 were committed by the task before").containsExactly(4L, 5L);
        assertThat(store.requests.get(16L).progressSeq).isEqualTo(3);
    }

    @Test
    void anOffsetThatCannotBeReadLeavesTheTablesProgressAndLosesNothing() {
        store.request(17, "webhooks", 0, 2);
        store.row(1, "order.created", "o");
        store.row(2, "order.created", "o");
        ReplayPass pass = hooksOnly(id -> {
            throw new IllegalStateException("offsets topic unavailable");
        });

        assertThat(seqs(run(pass))).containsExactly(1L, 2L);
    }

    @Test
    void aRoleWithoutTheGrantLooksAgainRarelyNotAtEveryCheck() {
        // each look refused is an ERROR in the server's log: a least-privilege role would log one every check
        ReplayPass pass = oneRowFailingFirst(18, "42501");

        assertThat(run(pass)).isEmpty();
        now += 5_000;
        assertThat(run(pass)).as("not at the check interval").isEmpty();
        now += ReplayPass.NO_PRIVILEGE_LOOK_MS - 5_000 - 1;
        assertThat(run(pass)).isEmpty();
        assertThat(store.calls).containsExactly("claim");
        now += 1;
        assertThat(seqs(run(pass))).as("granted meanwhile: served at the next look").containsExactly(1L);
    }

    /** Said at WARN once while refused, and again after a grant given and revoked once more (found by review). */
    @Test
    void aRefusalIsWarnedOnceUntilALookSucceeds() {
        try (LogCapture logs = LogCapture.start()) {
            ReplayPass pass = oneRowFailingFirst(19, "42501");
            run(pass);
            store.failNext("42501");
            now += ReplayPass.NO_PRIVILEGE_LOOK_MS;
            run(pass);
            assertThat(warnings(logs)).as("refused twice, said once").isOne();

            now += ReplayPass.NO_PRIVILEGE_LOOK_MS;
            List<SourceRecord> served = run(pass);
            assertThat(seqs(served)).as("granted").containsExactly(1L);
            ackAll(pass, served);
            for (int i = 0; i < 3 && warnings(logs) == 1; i++) { // the request done, the next looks refused again
                now += 5_000;
                store.failNext("42501");
                run(pass);
            }
            assertThat(warnings(logs)).as("revoked again: news").isEqualTo(2);
        }
    }

    private static long warnings(LogCapture logs) {
        return logs.lines("WARN").stream().filter(l -> l.contains("Replay is not possible")).count();
    }
}
