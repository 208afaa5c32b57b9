package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The relay loop's decisions on an in-memory table and the test's clock: acknowledged rows are stamped,
 * failed rows released with a backoff and retried alone, a graceful stop gives attempts back except for
 * the last batch, a lost claim result is recovered, leases are kept through a backoff, and an error no
 * retry can fix fails the task. The ITs check the same against PostgreSQL and a real worker.
 */
class OutboxRelayTaskTest {
    private static final long LEASE_MS = 3_000;
    private static final long LINGER_MS = OutboxSourceConnectorConfig.DEFAULT_LINGER_MS;

    private final MutableClock clock = new MutableClock(Instant.ofEpochMilli(1_000_000));
    private FakeOutboxStore store;
    private OutboxRelayTask task;
    /** What the task's LISTEN thread calls when LISTEN is (again) in place. */
    private Runnable listening;

    @BeforeEach
    void newStore() {
        store = new FakeOutboxStore(clock::millis, LEASE_MS);
    }

    @AfterEach
    void stopTask() {
        if (task != null) {
            task.stop();
        }
    }

    private void start(Map<String, String> overrides) {
        Map<String, String> props = new HashMap<>(Map.of(
            "name", "relay", "connection.url", "jdbc:postgresql://localhost/test", "subscriptions", "orders",
            "outbox.listen.enabled", "false", "outbox.lease.ms", Long.toString(LEASE_MS),
            "outbox.backoff.initial.ms", "2000", "outbox.poll.interval.ms", "1000"));
        // a fixed pace: these tests count claims per linger; the stretched pace is the one test that leaves it out
        props.put("outbox.linger.max.ms", Long.toString(LINGER_MS));
        props.putAll(overrides);
        task = new OutboxRelayTask(clock, (config, incarnation, onNotify, onListening) -> {
            // a LISTEN thread may report at once, before start() has finished
            listening = onListening;
            onListening.run();
            onNotify.run();
            return RelayBackend.of(store, () -> { });
        });
        task.start(props);
    }

    private static RecordMetadata at(long offset) {
        return new RecordMetadata(new TopicPartition("orders", 0), offset, 0, 0, 0, 0);
    }

    private static List<Long> seqs(List<SourceRecord> records) {
        return records.stream().map(r -> ((Struct) r.value()).getInt64("seq")).toList();
    }

    /**
     * A step of start() after the backend opened fails (here: reading the replay requests; a bug, or an Error such as
     * a class that fails to load): start() closes the backend before it throws, since the stop() that Connect calls
     * next has nothing to work on, and the pool and the LISTEN session would stay open for the worker's lifetime.
     * That stop() does nothing, and closes nothing twice.
     */
    @Test
    void aStartThatFailsAfterTheBackendOpenedClosesItAndStopDoesNothing() {
        assertStartFailingAfterTheBackendOpenedClosesIt(new IllegalStateException("replay requests unreadable"));
        assertStartFailingAfterTheBackendOpenedClosesIt(new NoClassDefFoundError("replay requests unreadable"));
    }

    private void assertStartFailingAfterTheBackendOpenedClosesIt(Throwable failure) {
        int[] closed = {0};
        Map<String, String> props = Map.of("name", "relay", "connection.url", "jdbc:postgresql://localhost/test",
            "subscriptions", "orders", "outbox.listen.enabled", "false");
        OutboxRelayTask failing = new OutboxRelayTask(clock, (config, incarnation, onNotify, onListening) ->
            new RelayBackend() {
                @Override
                public OutboxStore store() {
                    return store;
                }

                @Override
                public ReplayStore replays() {
                    if (failure instanceof Error error) {
                        throw error;
                    }
                    throw (RuntimeException) failure;
                }

                @Override
                public void close() {
                    closed[0]++;
                }
            });
        assertThatThrownBy(() -> failing.start(props)).isSameAs(failure);
        assertThat(closed[0]).as("closed by start(), on %s", failure).isOne();
        failing.stop();
        assertThat(closed[0]).as("stop() after the failed start").isOne();
    }

    @Test
    void acknowledgedRowsAreStampedWithWhereTheirRecordsWent() throws Exception {
        store.insert(1, "a");
        store.insert(2, "b");
        start(Map.of());
        List<SourceRecord> records = task.poll();
        assertThat(seqs(records)).containsExactly(1L, 2L);
        assertThat(store.row(1).leaseOwner).isEqualTo(store.owner());

        task.commitRecord(records.get(0), at(40));
        task.poll();
        assertThat(store.row(1).fanout).as("the stamp goes with the next claim, outbox.linger.ms after this one").isNull();
        clock.advance(LINGER_MS);
        task.poll();
        assertThat(store.row(1).fanout).isEqualTo("{\"orders\":{\"topic\":\"orders\",\"partition\":0,\"offset\":40}}");
        assertThat(store.row(2).fanout).as("not acknowledged yet").isNull();
        task.commitRecord(records.get(1), at(41));
        clock.advance(LINGER_MS);
        task.poll();
        assertThat(store.row(2).fanout).contains("\"offset\":41");
        assertThat(store.releases).isEmpty();
        assertThat(store.passes).as("one statement per pass: each stamp rode with a claim")
            .allSatisfy(p -> assertThat(p.limit()).isPositive());
    }

    @Test
    void aRowWhoseRecordWasDroppedIsReleasedWithABackoffAndThenRetriedAlone() throws Exception {
        store.insert(1, "a");
        store.insert(2, "b");
        start(Map.of("errors.tolerance", "all"));
        List<SourceRecord> records = task.poll();
        task.commitRecord(records.get(0), at(7));
        task.commitRecord(records.get(1), null); // dropped under errors.tolerance=all
        task.poll();
        clock.advance(LINGER_MS);
        task.poll();

        assertThat(store.row(1).fanout).isNotNull();
        assertThat(store.releases).singleElement().satisfies(batch -> assertThat(batch).singleElement()
            .satisfies(r -> {
                assertThat(r.seq()).isEqualTo(2);
                assertThat(r.returnAttempt()).isFalse();
                assertThat(r.delayMs()).isEqualTo(2_000);
                assertThat(r.error()).contains("not acknowledged");
            }));
        clock.advance(1_999 - LINGER_MS);
        assertThat(task.poll()).as("its backoff has not passed").isNull();
        clock.advance(1_001); // quiet and polling (LISTEN off here): its next poll, outbox.poll.interval.ms at most
        List<SourceRecord> retried = task.poll();
        assertThat(seqs(retried)).containsExactly(2L);
        assertThat(store.row(2).attempts).isEqualTo(2);
    }

    /**
     * Found by review: a row due to be poisoned that another claimer leased meanwhile (this task was not polled for
     * its lease time) is left alone by the poisoning, as it must be, but nothing said so: the operator saw a row
     * that had failed its last attempt neither poisoned nor logged.
     */
    @Test
    void aPoisoningThatFindsTheRowLeasedByAnotherClaimerSaysSoAndWritesNothing() throws Exception {
        store.insert(1, "a");
        start(Map.of("errors.tolerance", "all", "outbox.max.attempts", "1"));
        task.commitRecord(task.poll().get(0), null); // dropped under errors.tolerance=all: its last attempt
        store.row(1).leaseOwner = "relay-1#other"; // this task's lease lapsed, another claimer took the row
        store.row(1).leaseUntil = Long.MAX_VALUE;
        try (LogCapture logs = LogCapture.start()) {
            task.poll();
            clock.advance(LINGER_MS);
            task.poll();

            assertThat(store.row(1).poisonReason).isNull();
            assertThat(store.row(1).leaseOwner).isEqualTo("relay-1#other");
            assertThat(logs.lines("WARN")).singleElement().asString().contains("seq=[1]")
                .contains("no longer as this task claimed them");
            assertThat(logs.lines("ERROR")).as("no row said poisoned").isEmpty();
        }
    }

    /**
     * A row released with a backoff by an incarnation that then stopped (a rebalance) is retried when its backoff
     * ends, not at the next incarnation's sweep a minute later: the next incarnation, quiet, claims it at its first
     * look after it falls due.
     */
    @Test
    void aRowReleasedWithABackoffBeforeARestartIsRetriedWhenItFallsDueNotAtTheSweep() throws Exception {
        store.withWakeupFlag();
        store.insert(1, "a");
        Map<String, String> props = Map.of("errors.tolerance", "all", "outbox.listen.enabled", "true");
        start(props);
        task.commitRecord(task.poll().get(0), null); // dropped under errors.tolerance=all
        task.stop(); // releases it with its backoff
        task = null;
        long dueAt = store.row(1).nextAttemptAt;
        assertThat(dueAt - clock.millis()).as("released with the first backoff").isEqualTo(2_000);

        start(props);
        quiet();
        clock.advance(dueAt - 1 - clock.millis());
        assertThat(task.poll()).as("the negative control: not before it is due").isNull();
        clock.advance(1 + ClaimPacer.LOOK_INTERVAL_MS);
        assertThat(seqs(task.poll())).as("claimed at the first look once due, 58 s before the sweep")
            .containsExactly(1L);
    }

    @Test
    void aGracefulStopGivesAttemptsBackExceptForTheLastBatchConnectMayNotHaveSent() throws Exception {
        for (long seq = 1; seq <= 4; seq++) {
            store.insert(seq, "s" + seq);
        }
        start(Map.of("outbox.batch.size", "2", "outbox.batch.max.size", "2"));
        assertThat(seqs(task.poll())).containsExactly(1L, 2L);
        assertThat(seqs(task.poll())).as("a full claim claims again at once").containsExactly(3L, 4L);
        task.stop();
        task = null;

        assertThat(store.releases).singleElement().satisfies(batch -> assertThat(batch)
            .extracting(OutboxStore.Release::seq, OutboxStore.Release::returnAttempt)
            .containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple(1L, true), org.assertj.core.groups.Tuple.tuple(2L, true),
                org.assertj.core.groups.Tuple.tuple(3L, false), org.assertj.core.groups.Tuple.tuple(4L, false)));
        assertThat(store.rows.values()).allSatisfy(r -> assertThat(r.leaseOwner).isNull());
        assertThat(store.row(1).attempts).isZero();
        assertThat(store.row(3).attempts).isEqualTo(1);
    }

    /**
     * Claims are bounded by bytes as well as rows: a task claims only while its rows in flight take less than
     * outbox.max.inflight.batches x outbox.batch.max.bytes, whatever the row limits allow.
     */
    @Test
    void aTaskClaimsOnlyWhileItsRowsInFlightTakeLessThanItsInFlightBatchesOfBytes() throws Exception {
        for (long seq = 1; seq <= 10; seq++) {
            store.insert(seq, "s" + seq);
            store.row(seq).bytes = 600;
        }
        store.maxClaimBytes(1_024);
        start(Map.of("outbox.batch.size", "10", "outbox.batch.max.bytes", "1024", "outbox.max.inflight.batches", "2"));
        List<SourceRecord> first = task.poll();
        assertThat(seqs(first)).containsExactly(1L);
        assertThat(seqs(task.poll())).containsExactly(2L);
        assertThat(seqs(task.poll())).containsExactly(3L);
        assertThat(seqs(task.poll())).containsExactly(4L);
        assertThat(task.poll()).as("2400 bytes in flight, 2048 allowed").isNull();

        task.commitRecord(first.get(0), at(1));
        assertThat(seqs(task.poll())).as("an acknowledgement made room").containsExactly(5L);
    }

    /** The row's release at the last stop: whether its attempt was returned, and the error it keeps. */
    private OutboxStore.Release releasedAtStop(long seq) {
        return store.releases.get(store.releases.size() - 1).stream().filter(r -> r.seq() == seq).findFirst()
            .orElseThrow();
    }

    /**
     * Under errors.tolerance=none a record the broker rejects fails the task after a later poll, and Connect
     * never tells the task which record it was. Records handed out with or after the row's were acknowledged:
     * the producer delivered past it, so it is what failed, and it keeps its attempt (it used to get it back,
     * and every restart met it again as a fresh row).
     */
    @Test
    void aStopKeepsTheAttemptOfARowWhoseRecordsWerePassedOverByAcknowledgedOnes() throws Exception {
        for (long seq = 1; seq <= 3; seq++) {
            store.insert(seq, "s" + seq);
        }
        start(Map.of("outbox.batch.size", "1", "outbox.batch.max.size", "1"));
        assertThat(seqs(task.poll())).containsExactly(1L);
        assertThat(seqs(task.poll())).containsExactly(2L);
        List<SourceRecord> third = task.poll();
        task.commitRecord(third.get(0), at(3));
        assertThat(task.poll()).isNull();
        assertThat(task.poll()).isNull();
        task.stop();
        task = null;

        assertThat(releasedAtStop(1).returnAttempt()).isFalse();
        assertThat(releasedAtStop(1).error()).contains("acknowledged").contains("rejected");
        assertThat(releasedAtStop(2).returnAttempt()).isFalse();
        assertThat(store.row(1).attempts).isEqualTo(1);
        assertThat(store.row(3).fanout).as("stamped").isNotNull();
    }

    /** The negative control: nothing was acknowledged (the broker is down), so no row is to blame. */
    @Test
    void aStopWithNothingAcknowledgedGivesEveryAttemptBack() throws Exception {
        for (long seq = 1; seq <= 3; seq++) {
            store.insert(seq, "s" + seq);
        }
        start(Map.of("outbox.batch.size", "1", "outbox.batch.max.size", "1"));
        task.poll();
        task.poll();
        task.poll();
        assertThat(task.poll()).isNull();
        assertThat(task.poll()).isNull();
        task.stop();
        task = null;

        assertThat(store.releases.get(store.releases.size() - 1)).hasSize(3)
            .allSatisfy(r -> assertThat(r.returnAttempt()).isTrue());
        assertThat(store.rows.values()).allSatisfy(r -> assertThat(r.attempts).isZero());
    }

    /**
     * A row that failed before is retried alone; when the broker rejects it again and nothing was handed out
     * after it, nothing can be acknowledged past it either. Being the last row handed out, it keeps its
     * attempt, so a rejected row reaches poisoning in a quiet share too. The controls: with a row handed out
     * after it, or when the last row handed out is a fresh one (a graceful stop while the broker is down),
     * the attempt comes back.
     */
    @Test
    void aStopKeepsTheAttemptOfARetriedRowThatWasTheLastHandedOut() throws Exception {
        store.insert(1, "s1");
        store.row(1).attempts = 1;
        start(Map.of());
        assertThat(seqs(task.poll())).containsExactly(1L);
        assertThat(task.poll()).isNull();
        assertThat(task.poll()).isNull();
        task.stop();
        task = null;
        assertThat(releasedAtStop(1).returnAttempt()).isFalse();
        assertThat(releasedAtStop(1).error()).contains("retried");
        assertThat(store.row(1).attempts).isEqualTo(2);

        store.insert(2, "s2");
        start(Map.of());
        assertThat(seqs(task.poll())).containsExactly(1L);
        assertThat(seqs(task.poll())).as("the row behind it follows at once").containsExactly(2L);
        assertThat(task.poll()).isNull();
        assertThat(task.poll()).isNull();
        task.stop();
        task = null;
        assertThat(releasedAtStop(1).returnAttempt()).as("a row was handed out after it").isTrue();
        assertThat(releasedAtStop(2).returnAttempt()).as("fresh, nothing acknowledged: the broker may be down")
            .isTrue();
        assertThat(store.row(1).attempts).isEqualTo(2);
    }

    /** Rows given back at a stop are claimable at once: the other tasks (or this one's next incarnation) are woken. */
    @Test
    void leasesGivenBackAtAStopWakeTheOtherTasks() throws Exception {
        store.withWakeupFlag();
        store.insert(1, "a");
        start(Map.of("outbox.listen.enabled", "true"));
        assertThat(seqs(task.poll())).containsExactly(1L);
        task.stop();
        task = null;
        assertThat(store.wakes).containsExactly("outbox_events");

        store.row(1).fanout = "{}"; // nothing in flight at the next stop: nobody to wake
        start(Map.of("outbox.listen.enabled", "true"));
        assertThat(task.poll()).isNull();
        task.stop();
        task = null;
        assertThat(store.wakes).hasSize(1);
    }

    /**
     * With outbox.ordering=strict a stop wakes the other tasks even with nothing in flight: a row this incarnation
     * stamped may head a subject whose next row a restarted incarnation (started before this one stopped) could not
     * claim, and now waits for, quiet, with no writer to wake it.
     */
    @Test
    void withStrictOrderingEveryStopWakesTheOtherTasks() throws Exception {
        store.withWakeupFlag();
        store.insert(1, "a");
        start(Map.of("outbox.listen.enabled", "true", "outbox.ordering", "strict"));
        List<SourceRecord> records = task.poll();
        task.commitRecord(records.get(0), at(1));
        clock.advance(LINGER_MS);
        assertThat(task.poll()).isNull();
        assertThat(store.row(1).fanout).as("stamped before the stop").isNotNull();
        task.stop();
        task = null;
        assertThat(store.wakes).containsExactly("outbox_events");
    }

    /**
     * The backlog probe counts a table-wide backlog, which at tens of millions of rows takes longer than its
     * interval: it runs beside the task's thread, one probe at a time, and never holds up a claim. Before, it
     * ran inline in task 0's pass, which then did little but count.
     */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBacklogProbeSlowerThanItsIntervalHoldsUpNoClaim() throws Exception {
        CountDownLatch probeEnds = new CountDownLatch(1);
        store.backlogWaits = probeEnds;
        store.insert(1, "a");
        start(Map.of());
        clock.advance(RelayMaintenance.FIRST_BACKLOG_DELAY_MS);
        assertThat(seqs(task.poll())).containsExactly(1L);
        await().atMost(Duration.ofSeconds(10)).until(() -> store.backlogProbes.get() == 1); // on its own thread
        for (long seq = 2; seq <= 4; seq++) {
            store.insert(seq, "s" + seq);
            clock.advance(RelayMaintenance.BACKLOG_INTERVAL_MS);
            assertThat(seqs(task.poll())).as("claimed while the probe runs").containsExactly(seq);
        }
        assertThat(store.backlogProbes).as("one probe at a time").hasValue(1);

        probeEnds.countDown();
        await().atMost(Duration.ofSeconds(10))
            .until(() -> task.metrics().backlog.get() >= 0);
    }

    @Test
    void rowsOfAClaimWhoseResultWasLostAreTakenBackWithTheirAttemptAndClaimedAgain() throws Exception {
        store.insert(1, "a");
        store.insert(2, "b");
        store.loseNextClaimResult();
        start(Map.of());
        assertThat(task.poll()).isNull();
        assertThat(store.row(1).leaseOwner).as("the claim committed").isEqualTo(store.owner());

        clock.advance(2_000);
        List<SourceRecord> records = task.poll();
        assertThat(seqs(records)).containsExactly(1L, 2L);
        assertThat(store.row(1).attempts).as("the lost claim's attempt was returned").isEqualTo(1);
    }

    @Test
    void aRowAttemptedBeforeGoesOutAloneAndTheRowsAfterItFollowAtOnceInSeqOrder() throws Exception {
        for (long seq = 1; seq <= 5; seq++) {
            store.insert(seq, "same-subject");
        }
        store.row(2).attempts = 1; // released after a failed delivery, claimable again
        start(Map.of());
        assertThat(seqs(task.poll())).containsExactly(1L);
        assertThat(seqs(task.poll())).as("retried alone, without waiting for a wake-up").containsExactly(2L);
        assertThat(seqs(task.poll())).as("the next in line may be a retry too: one row").containsExactly(3L);
        assertThat(seqs(task.poll())).as("a fresh one: batches again").containsExactly(4L, 5L);
        assertThat(store.row(2).attempts).isEqualTo(2);
        assertThat(task.metrics().value("rows-retried-total")).isEqualTo(1);
    }

    @Test
    void aRestartedTaskClaimsWhatItsEarlierIncarnationHeldAtOnceOneByOneKeepingTheAttempt() throws Exception {
        for (long seq = 1; seq <= 5; seq++) {
            store.insert(seq, "s" + seq);
        }
        store.leaseAsEarlierIncarnation(1); // it stopped without releasing them, their leases run for minutes
        store.leaseAsEarlierIncarnation(2);
        start(Map.of());
        assertThat(seqs(task.poll())).containsExactly(1L);
        assertThat(seqs(task.poll())).containsExactly(2L);
        assertThat(seqs(task.poll())).containsExactly(3L);
        assertThat(seqs(task.poll())).as("then fresh rows in batches again").containsExactly(4L, 5L);
        assertThat(store.row(1).attempts).as("they may have been in flight: the attempt stays counted").isEqualTo(2);
        assertThat(store.row(1).leaseOwner).isEqualTo(store.owner());

        // the earlier incarnation, still running (a zombie), leases a row after this one's first claim
        store.insert(6, "s6");
        clock.advance(1_000);
        store.leaseAsEarlierIncarnation(6);
        assertThat(task.poll()).as("its lease outlives the horizon: not taken").isNull();
        assertThat(store.row(6).leaseOwner).isNotEqualTo(store.owner());
    }

    @Test
    void aBusyTaskClaimsEveryLingerWithoutArmingAndArmsOnceClaimsFindNothing() throws Exception {
        FakeWakeupFlag flag = store.withWakeupFlag();
        store.insert(1, "a");
        start(Map.of("outbox.listen.enabled", "true"));
        assertThat(seqs(task.poll())).containsExactly(1L);
        long seq = 2;
        for (int cycle = 0; cycle < 5; cycle++) { // a steady trickle: two rows per linger
            store.insert(seq++, "a");
            store.insert(seq++, "b");
            assertThat(task.poll()).as("the linger has not passed").isNull();
            clock.advance(LINGER_MS);
            assertThat(seqs(task.poll())).as("cycle %d", cycle).containsExactly(seq - 2, seq - 1);
        }
        assertThat(flag.arms).as("no arming while rows keep arriving").isZero();
        int passes = store.passes.size();
        for (long idle = 0; idle < ClaimCadence.IDLE_BEFORE_ARMING_MS; idle += LINGER_MS) {
            clock.advance(LINGER_MS);
            assertThat(task.poll()).isNull();
        }
        assertThat(flag.arms).as("claims found nothing for the idle time").isZero();
        assertThat(store.passes.size() - passes).as("one claim per linger meanwhile")
            .isEqualTo((int) (ClaimCadence.IDLE_BEFORE_ARMING_MS / LINGER_MS));
        assertThat(task.poll()).as("the first look: arms, and claims once more").isNull();
        assertThat(flag.arms).isOne();
        assertThat(store.passes.size() - passes).isEqualTo((int) (ClaimCadence.IDLE_BEFORE_ARMING_MS / LINGER_MS) + 1);
    }

    /** A task listening on a table without the wake-up flag (before V2), quiet, its sweep every 10 s. */
    private void startQuietOnATableWithoutTheFlag() throws InterruptedException {
        start(Map.of("outbox.listen.enabled", "true", "outbox.sweep.interval.ms", "10000"));
        for (long idle = 0; idle <= 2 * ClaimCadence.IDLE_BEFORE_ARMING_MS; idle += LINGER_MS) {
            assertThat(task.poll()).isNull();
            clock.advance(LINGER_MS);
        }
    }

    /**
     * Migration V2 applied while the task runs: from then on writers NOTIFY only while a task is armed, so a task that
     * kept the table it found at start (no flag) would find new rows only at its looks. It looks for the flag again at
     * each sweep, and its next look arms it.
     */
    @Test
    void aFlagTheTableGetsWhileTheTaskRunsIsFoundAtTheNextSweepAndArmed() throws Exception {
        startQuietOnATableWithoutTheFlag();
        FakeWakeupFlag flag = store.withWakeupFlag();
        clock.advance(5_000);
        assertThat(task.poll()).as("a look").isNull();
        assertThat(flag.armAttempts).as("not known before the sweep: never armed").isZero();

        clock.advance(5_000);
        assertThat(task.poll()).as("the sweep").isNull();
        clock.advance(ClaimPacer.LOOK_INTERVAL_MS);
        assertThat(task.poll()).isNull();
        assertThat(flag.arms).as("found at the sweep, armed at the next look").isOne();
    }

    /**
     * A role with the table's grants alone may not use its flag: the task does not fail, never arms, and claims every
     * poll interval while quiet (its writers NOTIFY only for an armed task); once the grant is in, the next sweep
     * takes the flag up and the task arms it. The control is the table without a flag, whose quiet task claims
     * nothing before its sweep (the test above).
     */
    @Test
    void aFlagTheRoleMayNotUseMakesAQuietTaskPollUntilASweepFindsTheGrant() throws Exception {
        FakeWakeupFlag flag = store.withWakeupFlag();
        store.flagNotPermitted(true);
        startQuietOnATableWithoutTheFlag(); // sweep every 10 s; poll interval the default, 1 s
        assertThat(flag.arms).isZero();
        int passes = store.passes.size();
        store.insert(1, "a"); // no NOTIFY: the flag was never armed
        clock.advance(1_000);

        assertThat(seqs(task.poll())).as("claimed at the poll interval, long before the sweep").containsExactly(1L);
        assertThat(store.passes.size()).isEqualTo(passes + 1);

        store.flagNotPermitted(false);
        clock.advance(9_000);
        task.poll(); // the sweep looks, and finds it may use the flag
        for (long waited = 0; waited <= 1_000 && flag.arms == 0; waited += LINGER_MS) {
            clock.advance(LINGER_MS);
            task.poll();
        }
        assertThat(flag.arms).as("armed once it may, at the next look").isOne();
    }

    /**
     * The grants revoked while the task is quiet and armed, then given back: the refused arming of a look turns the
     * task to polling, the sweeps that find the flag still refused say nothing more, and the sweep after the grant
     * takes the flag up and says so as a grant, not as a migration applied (found by review: three WARNs for one
     * revoke, one of them "until it can", then the wrong INFO).
     */
    @Test
    void aGrantRevokedAndGivenBackIsSaidOnceEachWayAndTheTaskPollsMeanwhile() throws Exception {
        FakeWakeupFlag flag = store.withWakeupFlag();
        start(Map.of("outbox.listen.enabled", "true", "outbox.sweep.interval.ms", "10000"));
        quiet();
        try (LogCapture logs = LogCapture.start()) {
            flag.armFailure = new java.sql.SQLException("permission denied for sequence events_wakeup", "42501");
            store.flagNotPermitted(true);
            clock.advance(ClaimPacer.LOOK_INTERVAL_MS);
            assertThat(task.poll()).as("the look's arming refused, its claim: nothing there").isNull();
            for (int sweeps = 0; sweeps < 2; sweeps++) { // the sweeps find the flag still refused
                clock.advance(10_000);
                task.poll();
            }
            store.insert(1, "a"); // no NOTIFY: the flag was down
            clock.advance(1_000);
            assertThat(seqs(task.poll())).as("claimed at the poll interval, not the sweep").containsExactly(1L);
            assertThat(logs.lines("WARN")).as("said once").singleElement()
                .asString().contains("may no longer use the table's wake-up flag");

            flag.armFailure = null;
            store.flagNotPermitted(false);
            int arms = flag.arms;
            clock.advance(10_000);
            task.poll(); // the sweep finds the grant
            for (long waited = 0; waited <= 1_000 && flag.arms == arms; waited += LINGER_MS) {
                clock.advance(LINGER_MS);
                task.poll();
            }
            assertThat(flag.arms).as("armed again").isEqualTo(arms + 1);
            assertThat(logs.text()).contains("may use the wake-up flag").doesNotContain("migration V2 applied");
        }
    }

    /**
     * The look for the flag at a sweep can fail (a lost connection, grants revoked): the sweep's claim must still
     * hand its rows to Connect. A look after the claim that threw dropped the records claimed while the rows stayed
     * held as handed over, so a later pass could stamp them unsent (found by review).
     */
    @Test
    void aFailedLookForTheFlagAtASweepLosesNothingTheSweepClaimed() throws Exception {
        startQuietOnATableWithoutTheFlag();
        store.insert(1, "a"); // its NOTIFY lost: found by the sweep
        store.failNext("wakeupFlag", "08006");
        clock.advance(10_000);

        List<SourceRecord> swept = task.poll();

        assertThat(store.failurePending("wakeupFlag")).as("the sweep looked, and the look failed").isFalse();
        assertThat(seqs(swept)).containsExactly(1L);
        task.commitRecord(swept.get(0), at(7));
        clock.advance(LINGER_MS);
        task.poll();
        clock.advance(LINGER_MS);
        task.poll();
        assertThat(store.row(1).fanout).contains("\"offset\":7");
    }

    @Test
    void withTheDefaultsATrickleIsClaimedLessOftenThanEveryLingerButWithinTheLongestPace() throws Exception {
        store.withWakeupFlag();
        Map<String, String> defaults = new HashMap<>(Map.of("outbox.listen.enabled", "true"));
        defaults.put("outbox.linger.max.ms", Long.toString(OutboxSourceConnectorConfig.DEFAULT_LINGER_MAX_MS));
        start(defaults);
        store.insert(1, "a");
        assertThat(seqs(task.poll())).containsExactly(1L);
        long seq = 2;
        long gap = LINGER_MS;
        for (int cycle = 0; cycle < 6; cycle++) { // two rows per linger: a sixth of the aimed rows
            store.insert(seq++, "a");
            store.insert(seq++, "b");
            clock.advance(gap - 1);
            assertThat(task.poll()).as("cycle %d: not before the pace", cycle).isNull();
            clock.advance(1);
            assertThat(seqs(task.poll())).as("cycle %d", cycle).containsExactly(seq - 2, seq - 1);
            gap = OutboxSourceConnectorConfig.DEFAULT_LINGER_MAX_MS;
        }
    }

    /**
     * A NOTIFY sent while this task's LISTEN was reconnecting never reached it: back in place, the task claims
     * at once, as on a NOTIFY.
     */
    @Test
    void aListenSessionBackInPlaceClaimsAsANotifyWould() throws Exception {
        store.withWakeupFlag();
        start(Map.of("outbox.listen.enabled", "true"));
        quiet();
        store.insert(1, "a");
        assertThat(task.poll()).as("quiet: no claim without a reason").isNull();

        listening.run();
        assertThat(seqs(task.poll())).containsExactly(1L);
    }

    /** Claims until the task is quiet, armed, and its looks {@link ClaimPacer#LOOK_INTERVAL_MS} apart. */
    private void quiet() throws Exception {
        FakeWakeupFlag flag = (FakeWakeupFlag) store.wakeupFlag();
        int arms = flag.arms;
        for (int i = 0; i < 100 && flag.arms == arms; i++) {
            clock.advance(LINGER_MS);
            assertThat(task.poll()).isNull();
        }
        assertThat(flag.arms).as("armed").isGreaterThan(arms);
        for (int looks = 0; looks < 3; looks++) { // the gaps double up to LOOK_INTERVAL_MS
            clock.advance(ClaimPacer.LOOK_INTERVAL_MS);
            assertThat(task.poll()).isNull();
        }
    }

    /**
     * A writer took the flag down and its NOTIFY never came (it rolled back, the NOTIFY queue was too full,
     * LISTEN died unseen), and another task armed the flag again since: the rows of writers after the clear sent
     * no NOTIFY and may be in this task's share. Its next look claims them.
     */
    @Test
    void aRowWhoseNotifyNeverCameIsClaimedAtTheNextLookEvenAfterAnotherArming() throws Exception {
        FakeWakeupFlag flag = store.withWakeupFlag();
        start(Map.of("outbox.listen.enabled", "true"));
        quiet();
        flag.writerClears(); // and rolls back: no NOTIFY
        store.insert(1, "a"); // read the flag down: no NOTIFY either
        flag.armed = true; // another task armed it after a claim of its own
        assertThat(task.poll()).as("no look yet").isNull();
        clock.advance(ClaimPacer.LOOK_INTERVAL_MS);
        assertThat(seqs(task.poll())).as("claimed at the look").containsExactly(1L);
    }

    /**
     * An arming that fails (a lost connection, a statement timeout) never fails the pass: the rows its look
     * claimed are handed out, the acknowledged rows stamped with it, and the task claims at each look until
     * the flag can be armed again. (An arming refused for privilege stops arming: ClaimPacerTest.)
     */
    @Test
    void aFailingArmingNeitherGivesBackClaimedRowsNorHoldsBackStamps() throws Exception {
        FakeWakeupFlag flag = store.withWakeupFlag();
        store.insert(1, "a");
        start(Map.of("outbox.listen.enabled", "true"));
        List<SourceRecord> records = task.poll();
        task.commitRecord(records.get(0), at(1));
        flag.armFailure = new java.sql.SQLException("An I/O error occurred while sending to the backend", "08006");
        store.insert(2, "b");
        for (long idle = 0; idle <= ClaimCadence.IDLE_BEFORE_ARMING_MS + LINGER_MS; idle += LINGER_MS) {
            clock.advance(LINGER_MS);
            task.poll(); // claims 2, then finds nothing for the idle time: the arming fails
        }
        store.insert(3, "c");
        clock.advance(ClaimPacer.LOOK_INTERVAL_MS);
        assertThat(seqs(task.poll())).as("claimed at the look, unarmed").containsExactly(3L);
        assertThat(store.row(1).fanout).as("stamped all the same").isNotNull();
        assertThat(store.releases).as("nothing given back").isEmpty();
        assertThat(flag.arms).isZero();

        flag.armFailure = null;
        // row 3 came after a long gap, so the idle time may have grown (up to IDLE_BEFORE_ARMING_MAX_MS)
        for (long i = 0; i < ClaimCadence.IDLE_BEFORE_ARMING_MAX_MS / LINGER_MS + 3 && flag.arms == 0; i++) {
            clock.advance(LINGER_MS);
            task.poll();
        }
        assertThat(flag.arms).as("armed once it could").isOne();
        assertThat(store.releases).isEmpty();
    }

    /**
     * The in-flight window is full (a topic is down and its records wait), so no claim runs: the rows
     * acknowledged meanwhile are stamped on their own, a pace later, not held until the window drains.
     */
    @Test
    void whileTheWindowIsFullAcknowledgedRowsAreStampedAlone() throws Exception {
        for (long seq = 1; seq <= 4; seq++) {
            store.insert(seq, "s" + seq);
        }
        start(Map.of("outbox.batch.size", "2", "outbox.batch.max.size", "2", "outbox.max.inflight.batches", "1"));
        List<SourceRecord> first = task.poll();
        task.commitRecord(first.get(0), at(1)); // row 2's record waits for its broker
        clock.advance(LINGER_MS);
        List<SourceRecord> second = task.poll();
        assertThat(seqs(second)).as("claimed with row 1's stamp").containsExactly(3L, 4L);
        assertThat(store.row(1).fanout).isNotNull();
        task.commitRecord(second.get(0), at(2)); // row 4's waits too: rows 2 and 4 fill the window
        clock.advance(LINGER_MS);
        assertThat(task.poll()).isNull();
        assertThat(store.row(3).fanout).as("stamped although no claim can run").isNotNull();
        assertThat(store.passes.get(store.passes.size() - 1).limit()).as("a stamp alone").isZero();
    }

    /** At stop, a release that fails does not keep the acknowledged rows from their stamp. */
    @Test
    void aFailingReleaseAtStopDoesNotHoldBackTheStamps() throws Exception {
        store.insert(1, "a");
        store.insert(2, "b");
        start(Map.of("errors.tolerance", "all"));
        List<SourceRecord> records = task.poll();
        task.commitRecord(records.get(0), at(7));
        task.commitRecord(records.get(1), null); // dropped: released with a backoff, which fails
        store.failNext("release", "08006");
        task.stop();
        task = null;
        assertThat(store.row(1).fanout).isNotNull();
    }

    @Test
    void leasesOfRowsInFlightAreExtendedAlsoWhileTheTaskBacksOff() throws Exception {
        store.insert(1, "a");
        start(Map.of());
        assertThat(seqs(task.poll())).containsExactly(1L);
        long leasedUntil = store.row(1).leaseUntil;

        store.failNext("claim", "57P01"); // the server is shutting down: retriable
        clock.advance(1_000);
        assertThat(task.poll()).isNull();
        assertThat(store.extensions).as("extended first in the pass whose claim failed").containsExactly(List.of(1L));
        clock.advance(1_500); // inside the 2 s backoff, past the lease's first third
        assertThat(task.poll()).isNull();
        assertThat(store.extensions).hasSize(2);
        assertThat(store.row(1).leaseUntil).isEqualTo(clock.millis() + LEASE_MS).isGreaterThan(leasedUntil);
    }

    @Test
    void anErrorNoRetryCanFixFailsTheTaskNamingIt() throws Exception {
        store.insert(1, "a");
        store.failNext("claim", "42501");
        start(Map.of());
        assertThatThrownBy(task::poll).isInstanceOf(ConnectException.class)
            .isNotInstanceOf(RetriableException.class).hasMessageContaining("42501");
    }
}
