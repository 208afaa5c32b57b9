package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.common.ComputedOffset;
import io.outboxrelay.testsupport.MutableClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.LongStream;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The interleavings of docs/exactly-once.md, section 4, on an in-memory table and a fake of Connect's offsets
 * and transactions ({@link FakeTaskContext}): what each record's source offset names, what a restarted task
 * stamps from a committed offset before its first claim, and what connector-defined boundaries add. A
 * "crash" here is a task that is never stopped, followed by a new incarnation on the same table and offsets.
 */
class ExactlyOnceRelayTaskTest {
    private static final long LEASE_MS = 30_000;
    private static final String RECOVERED = "{\"orders\":{\"recovered\":\"source offset\"}}";

    private final MutableClock clock = new MutableClock(Instant.ofEpochMilli(1_000_000));
    /** JUnit makes an instance per test: a fresh table each time. */
    private final FakeOutboxStore store = new FakeOutboxStore(clock::millis, LEASE_MS);
    private FakeTaskContext context;
    private OutboxRelayTask task;

    @AfterEach
    void stopTheTaskUnlessItCrashed() {
        if (task != null) {
            task.stop();
        }
    }

    private void start(boolean connectorBoundaries, Map<String, String> overrides) {
        context = context == null ? new FakeTaskContext(connectorBoundaries) : context;
        Map<String, String> props = new HashMap<>(Map.of(
            "name", "relay", "connection.url", "jdbc:postgresql://localhost/test", "subscriptions", "orders",
            "outbox.listen.enabled", "false", "outbox.lease.ms", Long.toString(LEASE_MS),
            "outbox.backoff.initial.ms", "2000", "outbox.poll.interval.ms", "1000"));
        props.putAll(overrides);
        task = new OutboxRelayTask(clock, (config, incarnation, onNotify, onListening) -> RelayBackend.of(store, () -> { }));
        task.initialize(context);
        task.start(props);
    }

    private void start() {
        start(false, Map.of());
    }

    /** The task dies with everything in place (SIGKILL): no stop, no stamp, no release; then starts again. */
    private void crashAndRestart(boolean connectorBoundaries) {
        task = null;
        store.newIncarnation();
        clock.advance(1_000);
        start(connectorBoundaries, Map.of());
    }

    private void insert(long from, long to) {
        for (long seq = from; seq <= to; seq++) {
            store.insert(seq, "s" + seq);
        }
    }

    private static List<Long> seqs(List<SourceRecord> records) {
        return records == null ? List.of() : records.stream().map(r -> ((Struct) r.value()).getInt64("seq")).toList();
    }

    private static long[] named(SourceRecord record) {
        return PendingOffset.decode((String) record.sourceOffset().get("pending"));
    }

    @Test
    void everyRecordNamesTheRowsCompleteAtItACoveredRowOnlyAtItsCoalescedRecord() throws Exception {
        store.insert(1, "a", "order.created");
        store.insert(2, "a", "order.paid");
        store.insert(3, "b", "note.added"); // no subscription wants it: no record, complete from the start
        start(false, Map.of("subscriptions", "orders,latest", "subscription.orders.event.types", "order.*",
            "subscription.latest.event.types", "order.*", "subscription.latest.coalesce", "true"));
        List<SourceRecord> records = task.poll();

        assertThat(records).extracting(SourceRecord::topic).containsExactly("orders", "orders", "latest");
        assertThat(records).allSatisfy(r -> assertThat(r.sourcePartition()).isEqualTo(Map.of("outbox.slot", "events#0/1")));
        assertThat(named(records.get(0))).as("row 1 waits for the coalesced record").containsExactly(3);
        assertThat(named(records.get(1))).as("row 2 too").containsExactly(3);
        assertThat(named(records.get(2))).containsExactly(1, 2, 3);
        assertThat(Map.copyOf(records.get(2).sourceOffset()))
            .isEqualTo(Map.of("v", 1, "owner", store.owner(), "tasks", 1, "pending", "1+2", "subscriptions",
                "orders,latest"));
    }

    /** 4.1 */
    @Test
    void aStartingTaskStampsTheRowsItsCommittedOffsetNamesBeforeItsFirstClaim() throws Exception {
        insert(1, 3);
        start();
        List<SourceRecord> list = task.poll();
        context.commit(task, list); // committed and acknowledged; the stamp would ride with the next claim
        String deadOwner = store.owner();

        crashAndRestart(false);
        insert(4, 4);
        List<SourceRecord> after = task.poll();

        assertThat(store.recoveries).containsExactly(Map.entry(deadOwner, List.of(1L, 2L, 3L)));
        assertThat(store.row(1).fanout).isEqualTo(RECOVERED);
        assertThat(seqs(after)).as("produced again: none of the recovered rows").containsExactly(4L);
        assertThat(store.row(1).attempts).as("not claimed again").isEqualTo(1);
    }

    /**
     * 3.9, found by review: a subscription added between the crash and the restart never got the rows the committed
     * offset names (as without the crash: they were delivered before it existed), so their stamp must not say it did.
     */
    @Test
    void aSubscriptionAddedSinceTheCrashIsNotSaidToHaveTheRecoveredRows() throws Exception {
        insert(1, 2);
        start();
        context.commit(task, task.poll());

        task = null;
        store.newIncarnation();
        clock.advance(1_000);
        start(false, Map.of("subscriptions", "orders,audit"));
        task.poll();

        assertThat(store.row(1).fanout).isEqualTo(RECOVERED);
        assertThat(store.row(2).fanout).isEqualTo(RECOVERED);
    }

    /** The control: an offset written before it said which subscriptions (older versions) recovers for every one. */
    @Test
    void anOffsetThatDoesNotSayWhichSubscriptionsRecoversForEveryMatchingOne() throws Exception {
        insert(1, 1);
        start();
        List<SourceRecord> list = task.poll();
        context.commit(task, list);
        context.committed.replaceAll((partition, value) -> {
            Map<String, Object> old = new HashMap<>(value);
            old.remove("subscriptions");
            return old;
        });

        task = null;
        store.newIncarnation();
        clock.advance(1_000);
        start(false, Map.of("subscriptions", "orders,audit"));
        task.poll();

        assertThat(store.row(1).fanout)
            .isEqualTo("{\"orders\":{\"recovered\":\"source offset\"},\"audit\":{\"recovered\":\"source offset\"}}");
    }

    /** 4.2, the control of 4.1. */
    @Test
    void rowsOfATransactionThatNeverCommittedAreClaimedAndProducedOnce() throws Exception {
        insert(1, 3);
        start();
        assertThat(seqs(task.poll())).containsExactly(1L, 2L, 3L); // in the transaction the crash aborts

        crashAndRestart(false);
        List<Long> produced = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            produced.addAll(seqs(task.poll())); // taken over one by one: they were attempted before
        }
        assertThat(store.recoveries).allSatisfy(r -> assertThat(r.getValue()).isEmpty());
        assertThat(produced).containsExactly(1L, 2L, 3L);
    }

    /** 4.3: without exactly-once the next list is claimed while the first is in flight. */
    @Test
    void theOffsetNamesTheRowsOfEveryListNotYetStamped() throws Exception {
        insert(1, 4);
        start(false, Map.of("outbox.batch.size", "2", "outbox.batch.max.size", "2"));
        List<SourceRecord> first = task.poll();
        List<SourceRecord> second = task.poll(); // a full claim claims again at once
        assertThat(seqs(first)).containsExactly(1L, 2L);
        assertThat(named(second.get(0))).as("the first list's rows, in flight").containsExactly(1, 2, 3);
        assertThat(named(second.get(1))).containsExactly(1, 2, 3, 4);

        context.acknowledge(task, first, Set.of());
        context.commit(task, second); // an at-least-once offset commit: every record before it was acknowledged
        crashAndRestart(false);
        task.poll();
        assertThat(store.rows.values()).allSatisfy(r -> assertThat(r.fanout).isEqualTo(RECOVERED));
    }

    /** 4.4 */
    @Test
    void aRowLeavesTheOffsetsOnlyOnceItsStampCommitted() throws Exception {
        insert(1, 2);
        start();
        context.commit(task, task.poll());
        insert(3, 3);
        store.failNext("claim", "08006"); // the statement that stamps and claims
        clock.advance(100);
        assertThat(task.poll()).isNull();
        assertThat(store.row(1).fanout).isNull();

        clock.advance(2_000);
        List<SourceRecord> next = task.poll();
        assertThat(store.row(1).fanout).as("stamped with this claim").contains("offset");
        assertThat(named(next.get(0))).as("the stamped rows are no longer named").containsExactly(3);
    }

    @Test
    void aFailingReconciliationBacksOffAndClaimsNothing() throws Exception {
        insert(1, 2);
        start();
        context.commit(task, task.poll());
        crashAndRestart(false);
        store.failNext("stampRecovered", "08006");
        insert(3, 3);
        int passes = store.passes.size();

        assertThat(task.poll()).isNull();
        assertThat(store.passes).as("no claim").hasSize(passes);
        clock.advance(2_000);
        assertThat(seqs(task.poll())).containsExactly(3L);
        assertThat(store.row(1).fanout).isEqualTo(RECOVERED);
    }

    @Test
    void aNamedRowThatItsOwnerNoLongerLeasesIsNotStampedAndOneStampedAlreadyIsLeftAlone() throws Exception {
        insert(1, 3);
        store.leaseAs(1, "relay-0#gone");
        store.leaseAs(2, "relay-0#gone");
        store.row(2).leaseOwner = null; // requeued (or a table created again: a fresh row has no owner)
        store.row(2).attempts = 0;
        store.row(3).fanout = "{}"; // stamped by the owner itself before it died
        context = new FakeTaskContext(false);
        context.committed.put(Map.of("outbox.slot", "events#0"),
            Map.of("v", 1L, "owner", "relay-0#gone", "tasks", 1L, "pending", "1+2"));
        start();
        List<SourceRecord> records = task.poll();

        assertThat(store.row(1).fanout).isEqualTo(RECOVERED);
        assertThat(store.row(3).fanout).isEqualTo("{}");
        assertThat(seqs(records)).as("row 2 is claimed and produced").containsExactly(2L);
    }

    /** 4.7: slots as versions before 2026-12 wrote them, without the task count */
    @Test
    void slotsOfEarlierTaskCountsAreFoundAndReconciled() throws Exception {
        insert(1, 3);
        store.leaseAs(1, "relay-5#a");
        store.leaseAs(2, "relay-1500#b");
        store.leaseAs(3, "relay-3#c");
        context = new FakeTaskContext(false);
        // a generation of 8 tasks (slot 5), one of 2,000 (slot 1500), and slot 3 says that one existed
        context.committed.put(Map.of("outbox.slot", "events#5"),
            Map.of("v", 1L, "owner", "relay-5#a", "tasks", 8L, "pending", "1"));
        context.committed.put(Map.of("outbox.slot", "events#1500"),
            Map.of("v", 1L, "owner", "relay-1500#b", "tasks", 2000L, "pending", "2"));
        context.committed.put(Map.of("outbox.slot", "events#3"),
            Map.of("v", 1L, "owner", "relay-3#c", "tasks", 2000L, "pending", "3"));
        start();
        task.poll();

        assertThat(store.rows.values()).allSatisfy(r -> assertThat(r.fanout).isEqualTo(RECOVERED));
        assertThat(context.reads).as("every index of 1-64 tasks; then the slots without a count, twice").hasSize(3);
        assertThat(context.reads.get(0)).hasSize(SlotReconciler.COUNTS_READ_AT_LEAST
            * (SlotReconciler.COUNTS_READ_AT_LEAST + 1) / 2);
        assertThat(context.reads.get(1)).hasSize(SlotReconciler.SLOTS_READ_AT_LEAST);
    }

    /**
     * After a crash between a commit and its stamp and a change of the task count, a task of the new generation must
     * not overwrite the slot an old task wrote before a sibling whose share holds some of its rows has read it: a
     * slot is named by the task's index and the generation's task count. Before, task 0 of 2 overwrote slot
     * {@code events#0} of the generation of 1 with its first commit, and task 1, starting later, found its rows
     * named nowhere: produced again once their lease lapsed, twice in the topic under exactly-once.
     */
    @Test
    void aNewGenerationsTaskLeavesTheSlotOfAnEarlierCountForTheSiblingThatNeedsIt() throws Exception {
        store.insert(1, "a");
        store.insert(2, "b");
        start();
        List<SourceRecord> old = task.poll();
        assertThat(seqs(old)).containsExactly(1L, 2L);
        context.commit(task, old);
        task = null; // SIGKILL after the commit, before the stamp: rows 1 and 2 stay leased, unstamped

        Map<String, String> two = Map.of("tasks.max", "2", "task.relay.count", "2");
        store.becomeTask("relay-0", "a"::equals);
        start(false, withIndex(two, 0));
        store.insert(3, "a");
        clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MS);
        List<SourceRecord> first = task.poll();
        assertThat(store.row(1).fanout).as("task 0 reconciles its share").isEqualTo(RECOVERED);
        context.commit(task, first); // its first commit, before task 1 has started
        task.stop();
        task = null;

        store.becomeTask("relay-1", "b"::equals);
        start(false, withIndex(two, 1));
        List<SourceRecord> second = task.poll();
        assertThat(store.row(2).fanout).as("task 1 finds row 2 named by the generation of 1").isEqualTo(RECOVERED);
        assertThat(seqs(second)).doesNotContain(2L);
    }

    private static Map<String, String> withIndex(Map<String, String> props, int index) {
        Map<String, String> out = new HashMap<>(props);
        out.put("task.relay.index", Integer.toString(index));
        return out;
    }

    /** 4.10 */
    @Test
    void aListCommittedInPartNamesOnlyTheRowsWhollyInIt() throws Exception {
        store.insert(1, "a", "order.created");
        store.insert(2, "b", "order.created");
        start(false, Map.of("subscriptions", "orders,all", "subscription.orders.event.types", "order.*"));
        List<SourceRecord> list = task.poll(); // 1->orders, 1->all, 2->orders, 2->all
        assertThat(list).hasSize(4);
        context.commit(task, list, 3, Set.of()); // a stop while Connect retried the fourth send
        String deadOwner = store.owner();

        crashAndRestart(false);
        List<SourceRecord> after = task.poll();
        assertThat(store.recoveries).containsExactly(Map.entry(deadOwner, List.of(1L)));
        assertThat(seqs(after)).as("row 2 straddled the cut: produced again, never stamped unsent").contains(2L);
    }

    /** 4.11, poll boundaries: the window the README names. */
    @Test
    void aRowWhoseLastRecordsWereFilteredIsNamedOnlyByTheNextList() throws Exception {
        insert(1, 2);
        start();
        List<SourceRecord> list = task.poll();
        context.commit(task, list, 2, Set.of(1)); // the last record filtered: the first one's offset commits
        assertThat(context.committed.values()).singleElement()
            .satisfies(v -> assertThat(PendingOffset.decode((String) v.get("pending"))).containsExactly(1));
    }

    /** 4.11, connector boundaries: every record carries the whole list's offset. */
    @Test
    void withConnectorBoundariesAFilteredLastRecordStillLeavesItsListNamed() throws Exception {
        insert(1, 2);
        start(true, Map.of());
        List<SourceRecord> list = task.poll();
        assertThat(list.get(0).sourceOffset()).isSameAs(list.get(1).sourceOffset());
        context.commit(task, list, 2, Set.of(1));
        String deadOwner = store.owner();

        crashAndRestart(true);
        task.poll();
        assertThat(store.recoveries).containsExactly(Map.entry(deadOwner, List.of(1L, 2L)));
    }

    @Test
    void withConnectorBoundariesTheCommitIsAskedOnEachListsLastRecordNeverForABatchOrAnAbort() throws Exception {
        insert(1, 3);
        start(true, Map.of("outbox.batch.size", "2", "outbox.batch.max.size", "2"));
        List<SourceRecord> first = task.poll();
        context.commit(task, first);
        List<SourceRecord> second = task.poll();

        assertThat(context.transactions.commitsOn).containsExactly(first.get(1), second.get(0));
        assertThat(context.transactions.batchCommits).isZero();
        assertThat(context.transactions.aborts).isZero();
    }

    /** 3.8 */
    @Test
    void withConnectorBoundariesAnAllFilteredListIsSettledAtTheNextPollAndItsLateNullChangesNothing() throws Exception {
        insert(1, 1);
        start(true, Map.of());
        List<SourceRecord> list = task.poll(); // every record filtered: Connect commits nothing, acknowledges nothing
        clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MS);
        task.poll();
        clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MS);
        task.poll();
        assertThat(store.row(1).fanout).isEqualTo("{\"orders\":{\"filtered\":true}}");

        task.commitRecord(list.get(0), null); // delivered with the next commit that happens
        clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MS);
        task.poll();
        assertThat(store.row(1).fanout).isEqualTo("{\"orders\":{\"filtered\":true}}");
    }

    /**
     * 3.8 under poll boundaries, found by review: lists whose every record a transform filtered filled the in-flight
     * window and no claim came again (Connect acknowledges them only with a later transaction, which needs a claim).
     * Settled once Connect showed it commits each list: a commit() on the poll thread (this test's thread), which an
     * exactly-once worker makes after every list, an all-filtered one too, whatever exactly.once.support says.
     */
    @ParameterizedTest
    @ValueSource(strings = {"required", "requested"})
    void underExactlyOnceWithPollBoundariesAllFilteredListsSettleSoAFullWindowClaimsAgain(String support)
        throws Exception {
        insert(1, 2);
        startOneRowWindow(Map.of("exactly.once.support", support));
        assertThat(seqs(task.poll())).containsExactly(1L); // filtered: Connect acknowledges nothing
        task.commit(); // the list's transaction boundary, with nothing to commit

        assertThat(pollUntilRows(true)).containsExactly(2L);
        assertThat(store.row(1).fanout).isEqualTo("{\"orders\":{\"filtered\":true}}");
    }

    /**
     * Found by a review of the fix: a pause commits the open transaction while Connect still retries the rest of the
     * list, then sends that rest without polling; under interval boundaries its records are acknowledged only at the
     * interval's commit, after the next poll. Only what was in flight at the last poll may be taken for filtered.
     */
    @Test
    void aCommitWhileAListIsStillBeingSentSettlesNothingOfThatList() throws Exception {
        startOneRowWindow(Map.of("transaction.boundary", "interval", "outbox.batch.size", "2",
            "outbox.batch.max.size", "2"));
        assertThat(task.poll()).isNullOrEmpty();
        task.commit(); // an exactly-once worker, seen before the list below
        insert(1, 2);
        clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MAX_MS);
        List<SourceRecord> list = task.poll();
        assertThat(seqs(list)).containsExactly(1L, 2L);
        context.acknowledge(task, list.subList(0, 1), Set.of()); // sent before the pause, committed by it
        task.commit(); // the pause's commit; the rest of the list goes out after the resume, in the next transaction

        for (int i = 0; i < 3; i++) {
            clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MAX_MS);
            task.poll();
        }
        assertThat(store.row(2).fanout).as("on its way, not filtered").isNull();

        context.acknowledge(task, list.subList(1, 2), Set.of()); // the interval's commit
        task.commit();
        insert(3, 3);
        assertThat(pollUntilRows(true)).containsExactly(3L);
        assertThat(store.row(2).fanout).isNotNull().isNotEqualTo("{\"orders\":{\"filtered\":true}}");
    }

    /**
     * The controls: where Connect may acknowledge a list after the next poll, a full window waits for the
     * acknowledgement and never takes the list for filtered: no commit() since the last poll (interval boundaries
     * between two commits), or commit() from another thread (an at-least-once worker's offset committer, whatever
     * exactly.once.support says).
     */
    @ParameterizedTest
    @ValueSource(strings = {"no-commit", "at-least-once"})
    void withoutACommitOnThePollThreadAnUnacknowledgedListIsNeverTakenForFiltered(String mode) throws Exception {
        boolean atLeastOnce = mode.equals("at-least-once");
        insert(1, 2);
        startOneRowWindow(atLeastOnce ? Map.of("exactly.once.support", "required")
            : Map.of("transaction.boundary", "interval"));
        List<SourceRecord> first = task.poll();
        if (atLeastOnce) {
            onAnotherThread(task::commit);
        }

        for (int i = 0; i < 3; i++) {
            clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MAX_MS);
            assertThat(task.poll()).as("the window is full").isNullOrEmpty();
        }
        assertThat(store.row(1).fanout).as("in flight, not settled").isNull();

        if (atLeastOnce) {
            onAnotherThread(() -> context.acknowledge(task, first, Set.of()));
        } else {
            context.acknowledge(task, first, Set.of()); // the interval's commit: acknowledged, then commit()
            task.commit();
        }
        assertThat(pollUntilRows()).containsExactly(2L);
        assertThat(store.row(1).fanout).isNotEqualTo("{\"orders\":{\"filtered\":true}}");
    }

    private interface Call {
        void run() throws Exception;
    }

    private static void onAnotherThread(Call call) throws InterruptedException {
        Thread other = new Thread(() -> assertThatCode(call::run).doesNotThrowAnyException());
        other.start();
        other.join();
    }

    private void startOneRowWindow(Map<String, String> overrides) {
        Map<String, String> props = new HashMap<>(Map.of("outbox.batch.size", "1", "outbox.batch.max.size", "1",
            "outbox.max.inflight.batches", "1"));
        props.putAll(overrides);
        start(false, props);
    }

    private List<Long> pollUntilRows() throws InterruptedException {
        return pollUntilRows(false);
    }

    /** With {@code commits}, a commit() after each poll, as an exactly-once worker makes after every list it sent. */
    private List<Long> pollUntilRows(boolean commits) throws InterruptedException {
        List<Long> next = new ArrayList<>();
        for (int i = 0; i < 4 && next.isEmpty(); i++) {
            clock.advance(OutboxSourceConnectorConfig.DEFAULT_LINGER_MAX_MS);
            next.addAll(seqs(task.poll()));
            if (commits) {
                task.commit();
            }
        }
        return next;
    }

    /** 3.7, 4.14 */
    @Test
    void withConnectorBoundariesAStopKeepsTheLeasesOfRowsInFlight() throws Exception {
        insert(1, 2);
        start(true, Map.of());
        assertThat(seqs(task.poll())).containsExactly(1L, 2L);
        task.stop();
        task = null;

        assertThat(store.releases).as("nothing released").isEmpty();
        assertThat(store.row(1).leaseOwner).isEqualTo(store.owner());
        assertThat(store.row(1).attempts).as("the last list keeps its attempt").isEqualTo(1);
    }

    /**
     * With connector boundaries the rows in flight keep their leases at a stop, for the next incarnation to reconcile
     * and take over; one that started before this one stopped (a rebalance) may be quiet already, so the stop wakes the
     * tasks of the table as when it gives rows back. A stop that holds nothing wakes nobody (the control); under
     * outbox.ordering=strict it does (OutboxRelayTaskTest).
     */
    @Test
    void withConnectorBoundariesAStopThatKeepsLeasesWakesTheOtherTasksAndOneHoldingNothingDoesNot() throws Exception {
        start(true, Map.of("outbox.listen.enabled", "true"));
        assertThat(task.poll()).isNull();
        task.stop();
        task = null;
        assertThat(store.wakes).as("the control: nothing held, nothing left to the others").isEmpty();

        insert(1, 1);
        start(true, Map.of("outbox.listen.enabled", "true"));
        assertThat(seqs(task.poll())).containsExactly(1L);
        task.stop();
        task = null;
        assertThat(store.releases).as("the leases kept").isEmpty();
        assertThat(store.wakes).containsExactly("outbox_events");
    }

    @Test
    void withPollBoundariesAStopReleasesTheRowsInFlightAsBefore() throws Exception {
        insert(1, 2);
        start();
        task.poll();
        task.stop();
        task = null;
        assertThat(store.rows.values()).allSatisfy(r -> assertThat(r.leaseOwner).isNull());
    }

    /** The negative control of the whole mechanism: under errors.tolerance=all the offsets name nothing. */
    @Test
    void underErrorsToleranceAllTheOffsetsAreTheOldOnesAndNothingIsRead() throws Exception {
        insert(1, 2);
        context = new FakeTaskContext(false);
        context.committed.put(Map.of("outbox.slot", "events#0"),
            Map.of("v", 1L, "owner", "relay-0#1", "tasks", 1L, "pending", "1"));
        start(false, Map.of("errors.tolerance", "all"));
        List<SourceRecord> records = task.poll();

        assertThat(context.reads).isEmpty();
        assertThat(records).extracting(SourceRecord::sourcePartition).containsOnly(Map.of("outbox", "events"));
        assertThat(records).extracting(SourceRecord::sourceOffset).containsExactly(Map.of("seq", 1L), Map.of("seq", 2L));
    }

    @Test
    void connectorBoundariesUnderErrorsToleranceAllRefuseToStart() {
        assertThatThrownBy(() -> start(true, Map.of("errors.tolerance", "all")))
            .isInstanceOf(ConnectException.class).hasMessageContaining("errors.tolerance=none");
        task = null;
    }

    @Test
    void poisonRecordsKeepTheOldPartitionAndAnOffsetNobodyReads() throws Exception {
        store.insert(1, "a");
        store.row(1).attempts = 5; // claimed a sixth time: over outbox.max.attempts
        start(false, Map.of("outbox.poison.topic", "poisoned"));
        List<SourceRecord> records = task.poll();
        assertThat(records).singleElement().satisfies(r -> {
            assertThat(r.topic()).isEqualTo("poisoned");
            assertThat(r.sourcePartition()).isEqualTo(Map.of("outbox", "events"));
        });
    }

    @Test
    void recordsAreEqualOnlyToThemselves() throws Exception {
        insert(1, 1);
        start();
        SourceRecord record = task.poll().get(0);
        SourceRecord copy = record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(), record.key(),
            record.valueSchema(), record.value(), record.timestamp(), record.headers());
        assertThat(record).isNotEqualTo(copy).isEqualTo(record);
        assertThat(((ComputedOffset) record.sourceOffset()).computed()).as("hashing did not read the offset").isFalse();
        assertThat(new java.util.HashSet<>(List.of(record))).contains(record); // as Connect's committableRecords
        assertThat(((ComputedOffset) record.sourceOffset()).computed()).isFalse();
        assertThat(LongStream.of(named(record))).containsExactly(1L);
    }
}
