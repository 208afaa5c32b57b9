package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The claim protocol against a real PostgreSQL: concurrent claimers never get the same row, a claim
 * never exceeds its batch, a crashed claimer's rows come back when the lease expires, and a restarted
 * task takes its own leases back at once.
 */
class JdbcOutboxStoreIT {
    private static TestDatabase db;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("claimer");
        pool = db.pool("claimer-it", 8);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    @BeforeEach
    void emptyOutbox() {
        db.execute("TRUNCATE events RESTART IDENTITY");
    }

    private static int incarnations;

    /** A new incarnation of the task {@code owner}, as a task start makes one. */
    private static JdbcOutboxStore claimer(String owner, long leaseMs) {
        return new JdbcOutboxStore(pool, "events", "\"events\"", owner, String.format("%08x", ++incarnations), 1, 0, leaseMs,
            "outbox_events_fanned", null);
    }

    @Test
    void concurrentClaimersNeverClaimOneRowTwiceAndABatchIsBounded() throws Exception {
        db.insertEvents(5_000, 50, "t.a");
        // rows attempted before among them: each claimed alone, cutting the others' batches
        db.execute("UPDATE events SET attempts = 1 WHERE seq % 97 = 0");
        Set<Long> claimed = ConcurrentHashMap.newKeySet();
        List<Long> duplicates = new ArrayList<>();
        ExecutorService pool4 = Executors.newFixedThreadPool(4);
        List<Future<Integer>> maxBatch = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            JdbcOutboxStore c = claimer("claimer-" + t, 60_000);
            maxBatch.add(pool4.submit(() -> {
                int largest = 0;
                while (true) {
                    List<ClaimedRow> rows = c.claim(100).rows();
                    if (rows.isEmpty()) {
                        return largest;
                    }
                    largest = Math.max(largest, rows.size());
                    for (ClaimedRow r : rows) {
                        if (!claimed.add(r.seq())) {
                            synchronized (duplicates) {
                                duplicates.add(r.seq());
                            }
                        }
                    }
                }
            }));
        }
        for (Future<Integer> f : maxBatch) {
            assertThat(f.get()).isLessThanOrEqualTo(100);
        }
        pool4.shutdown();
        assertThat(duplicates).isEmpty();
        assertThat(claimed).hasSize(5_000);
    }

    @Test
    void aCrashedClaimersRowsAreClaimedAgainOneByOneOnceTheLeaseExpires() throws Exception {
        db.insertEvents(3, 3, "t.a");
        JdbcOutboxStore crashed = claimer("crashed-0", 1_000);
        assertThat(crashed.claim(10).rows()).hasSize(3); // and then it dies without stamping

        JdbcOutboxStore survivor = claimer("survivor-0", 60_000);
        assertThat(survivor.claim(10).rows()).as("leases still valid").isEmpty();

        List<List<Long>> reclaimed = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            List<ClaimedRow> rows = survivor.claim(10).rows();
            if (!rows.isEmpty()) {
                reclaimed.add(rows.stream().map(ClaimedRow::seq).toList());
            }
            return reclaimed.size() == 3;
        });
        assertThat(reclaimed).as("attempted before: each claimed alone, in seq order").containsExactly(
            List.of(1L), List.of(2L), List.of(3L));
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE attempts = 2 AND lease_owner = ?", survivor.owner()))
            .isEqualTo(3);
    }

    @Test
    void aClaimerWhoseLeaseLapsedCannotPoisonARowAnotherClaimerHoldsNow() throws Exception {
        db.insertEvents(2, 2, "t.a");
        JdbcOutboxStore slow = claimer("slow-0", 1);
        assertThat(slow.claim(10).rows()).hasSize(2);
        JdbcOutboxStore next = claimer("next-0", 60_000);
        await().atMost(Duration.ofSeconds(10)).until(() -> !next.claim(1).rows().isEmpty());

        // the slow claimer's rows failed: it poisons both, but seq 1 is the next claimer's now
        assertThat(slow.poison(List.of(new OutboxStore.Poison(1, "test: late", 1), new OutboxStore.Poison(2, "test: late", 1))))
            .extracting(PoisonedRow::seq).containsExactly(2L);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE seq = 1 AND poisoned_at IS NULL AND lease_owner = ?",
            next.owner())).isEqualTo(1);
    }

    /**
     * Found by review: the owner guard alone let a claimer whose lease lapsed poison a row that another claimer had
     * claimed and let go, or that an operator had requeued (requeue clears the lease): the requeue was undone, the
     * row poisoned again with the old reason. The row's attempts as the claimer last saw them must still be its own.
     */
    @Test
    void aClaimerWhoseLeaseLapsedCannotPoisonARowClaimedSinceOrRequeued() throws Exception {
        db.insertEvents(2, 2, "t.a");
        JdbcOutboxStore slow = claimer("slow-0", 1);
        List<ClaimedRow> seen = slow.claim(10).rows();
        assertThat(seen).extracting(ClaimedRow::attempts).containsExactly(1, 1);
        JdbcOutboxStore next = claimer("next-0", 60_000);
        List<Long> taken = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> { // attempted before: each is claimed alone
            next.claim(10).rows().forEach(r -> taken.add(r.seq()));
            return taken.size() == 2;
        });
        next.release(List.of(new OutboxStore.Release(1, false, 0, "test: failed at next")));
        next.poison(List.of(new OutboxStore.Poison(2, "test: poisoned by next", 2)));
        db.execute("SELECT events_requeue(2)");

        assertThat(slow.poison(List.of(new OutboxStore.Poison(1, "test: stale", 1),
            new OutboxStore.Poison(2, "test: stale", 1)))).as("neither is the slow claimer's now").isEmpty();
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NULL AND lease_owner IS NULL"
            + " AND fanned_out_at IS NULL")).isEqualTo(2);
        assertThat(next.poison(List.of(new OutboxStore.Poison(1, "test: poisoned by next", 2))))
            .as("the control: with the attempts it saw, the last claimer poisons").hasSize(1);
    }

    /**
     * Found by review: another claimer poisoned a row while the slow claimer's records of it waited for their
     * acknowledgement; the acknowledgement stamped it, and the row ended both fanned out and poisoned (retention never
     * deleted it, a requeue could not reset it). Delivered, it is fanned out and no longer poisoned.
     */
    @Test
    void aRowDeliveredByAClaimerWhoseLeaseLapsedIsFannedOutNotPoisoned() throws Exception {
        db.insertEvents(1, 1, "t.a");
        JdbcOutboxStore slow = claimer("slow-0", 1);
        ClaimedRow seen = slow.claim(10).rows().get(0);
        JdbcOutboxStore next = claimer("next-0", 60_000);
        List<ClaimedRow> taken = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> taken.addAll(next.claim(10).rows()));
        assertThat(next.poison(List.of(new OutboxStore.Poison(1, "test: failed at next", taken.get(0).attempts()))))
            .hasSize(1);

        assertThat(slow.stamp(List.of(new OutboxStore.Stamp(1, "{\"hooks\":{}}", seen.id())))).isOne();

        assertThat(db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL AND poisoned_at IS NULL"
            + " AND last_error = 'test: failed at next'")).isEqualTo(1);
    }

    @Test
    void aRowAttemptedBeforeEndsTheBatchAndIsThenClaimedAloneSoSeqOrderHolds() throws Exception {
        db.insertEvents(6, 6, "t.a");
        db.execute("UPDATE events SET attempts = 1, last_error = 'test: failed once' WHERE seq = 3");
        JdbcOutboxStore c = claimer("cut-0", 60_000);
        OutboxStore.Claim first = c.claim(10);
        assertThat(first.rows()).extracting(ClaimedRow::seq).containsExactly(1L, 2L);
        assertThat(first.found()).as("six rows were in line").isEqualTo(6);
        OutboxStore.Claim retry = c.claim(10);
        assertThat(retry.rows()).extracting(ClaimedRow::seq).containsExactly(3L);
        assertThat(retry.retry()).isTrue();
        assertThat(retry.rows().get(0).attempts()).isEqualTo(2);
        assertThat(c.claim(10).rows()).extracting(ClaimedRow::seq).containsExactly(4L, 5L, 6L);
    }

    @Test
    void aRestartedTaskClaimsWhatItsEarlierIncarnationLeasedBeforeItStartedAndNoOneElsesLeases() throws Exception {
        db.insertEvents(4, 4, "t.a");
        JdbcOutboxStore before = claimer("relay-0", 600_000);
        List<ClaimedRow> leasedBefore = before.claim(10).rows();
        assertThat(leasedBefore).hasSize(4);
        // other tasks' leases: another task, a connector whose name extends this task's owner (leasing as this
        // version does and as versions without incarnations did), and a row leased by such a version under
        // this task's own name (that one is taken over too)
        db.insertEvents(4, 4, "t.a");
        assertThat(claimer("relay-1", 600_000).claim(1).rows()).hasSize(1);
        assertThat(claimer("relay-0#x-0", 600_000).claim(1).rows()).hasSize(1);
        db.execute("UPDATE events SET lease_owner = 'relay-0#ab-3', lease_until = now() + interval '10 minutes', "
            + "attempts = 1 WHERE seq = (SELECT max(seq) - 1 FROM events)");
        db.execute("UPDATE events SET lease_owner = 'relay-0', lease_until = now() + interval '10 minutes', "
            + "attempts = 1 WHERE seq = (SELECT max(seq) FROM events)");

        JdbcOutboxStore restarted = claimer("relay-0", 600_000);
        List<ClaimedRow> again = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            List<ClaimedRow> rows = restarted.claim(10).rows();
            assertThat(rows).as("attempted before: retried one by one, at once").hasSize(1);
            again.addAll(rows);
        }
        assertThat(again).extracting(ClaimedRow::seq).containsExactly(1L, 2L, 3L, 4L, 8L);
        assertThat(again).extracting(ClaimedRow::attempts).containsOnly(2);
        assertThat(again).extracting(ClaimedRow::takenOver).containsOnly(true);
        assertThat(restarted.claim(10).rows()).isEmpty();
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner LIKE 'relay-1#%'")).isEqualTo(1);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner LIKE 'relay-0#x-0#%'")).isEqualTo(1);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner = 'relay-0#ab-3'")).isEqualTo(1);

        // the earlier incarnation, still stopping, can no longer release the rows; what it leases from now on
        // is its own until its lease expires (two live incarnations must not take rows from each other)
        before.release(leasedBefore.stream().map(r -> OutboxStore.Release.now(r.seq(), false)).toList());
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner = ?", restarted.owner()))
            .isEqualTo(5);
        db.insertEvents(1, 1, "t.a");
        assertThat(before.claim(10).rows()).hasSize(1);
        assertThat(restarted.claim(10).rows()).as("leased after the restart: not taken").isEmpty();
    }

    @Test
    void rowsOfAClaimWhoseResultWasLostComeBackWithTheirAttemptReturnedOnce() throws Exception {
        db.insertEvents(4, 4, "t.a");
        // another incarnation of the same task leased the last row with a lease that ends after this one's
        // horizon (still running: it leased after this one's first claim)
        db.execute("UPDATE events SET lease_owner = 'lost-0#ffff', lease_until = now() + interval '1 hour',"
            + " attempts = 1 WHERE seq = 4");
        JdbcOutboxStore task = claimer("lost-0", 600_000);
        List<ClaimedRow> held = task.claim(1).rows();
        long heldSeq = held.get(0).seq();
        assertThat(task.claim(10).rows()).as("committed, but the task never saw this result").hasSize(2);

        List<Long> released = task.takeBackUnknownLeases(List.of(heldSeq), List.of()).stream()
            .map(OutboxStore.TakenBack::seq).toList();
        assertThat(released).hasSize(2).doesNotContain(heldSeq);
        List<ClaimedRow> again = task.claim(10).rows();
        assertThat(again).as("never attempted as far as Connect is concerned: fresh, in one batch").hasSize(2);
        assertThat(again).extracting(ClaimedRow::attempts).containsOnly(1);
        assertThat(db.queryLong("SELECT attempts FROM events WHERE seq = ?", heldSeq))
            .as("the held row is untouched").isEqualTo(1);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner = 'lost-0#ffff'"))
            .as("another incarnation's lease is untouched").isEqualTo(1);

        // lost a second time: rows whose attempt came back once keep it, and are retried alone
        assertThat(task.takeBackUnknownLeases(List.of(heldSeq), released))
            .extracting(OutboxStore.TakenBack::attempts).containsOnly(1);
        assertThat(task.claim(10).rows()).singleElement().extracting(ClaimedRow::attempts).isEqualTo(2);
    }

    @Test
    void theStampSkipsRowsAlreadyStampedAndNotifiesReceiptsInChunksOnlyWhenItStamped() throws Exception {
        int rows = (JdbcOutboxStore.RECEIPT_PAYLOAD_MAX_BYTES + 1) / 37 + 5; // two chunks of 36-character ids
        db.insertEvents(rows, rows, "t.a");
        JdbcOutboxStore c = claimer("stamp-0", 60_000);
        List<ClaimedRow> claimed = c.claim(rows).rows();
        List<OutboxStore.Stamp> stamps = claimed.stream().map(r -> new OutboxStore.Stamp(r.seq(), "{}", r.id())).toList();
        try (Connection listener = db.connect()) {
            try (Statement st = listener.createStatement()) {
                st.execute("LISTEN outbox_events_fanned");
            }
            assertThat(c.stamp(stamps)).isEqualTo(rows);
            List<String> received = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                received.addAll(notifications(listener));
                return received.size() >= 2;
            });
            assertThat(received).hasSize(2);
            assertThat(String.join(",", received).split(","))
                .containsExactlyElementsOf(claimed.stream().map(ClaimedRow::id).toList());

            assertThat(c.stamp(stamps.stream().map(s -> new OutboxStore.Stamp(s.seq(), "{\"x\":1}", s.id())).toList()))
                .isZero();
            // a marker sent after the second stamp: once it arrives, anything the stamp sent would have too
            try (Statement st = db.connect().createStatement()) {
                st.execute("NOTIFY outbox_events_fanned, 'marker'");
            }
            List<String> after = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                after.addAll(notifications(listener));
                return after.contains("marker");
            });
            assertThat(after).as("nothing stamped: no receipt").containsExactly("marker");
        }
        assertThat(db.query("SELECT DISTINCT fanout::text FROM events")).containsExactly(List.of("{}"));
    }

    /**
     * Reconciliation (docs/exactly-once.md, 3.5): of the rows a committed offset names, only those still leased
     * un-fanned and not poisoned by the owner it names are stamped, with the fanout it was given and their
     * receipts; the others are counted as stamped already or reported.
     */
    @Test
    void theReconciliationStampTakesOnlyRowsItsOwnerStillLeasesAndSendsTheirReceipts() throws Exception {
        db.insertEvents(6, 6, "t.a", "t.b");
        JdbcOutboxStore dead = claimer("recover-0", 60_000);
        assertThat(dead.claim(5).rows()).hasSize(5); // seqs 1-5; 6 stays pending
        db.execute("UPDATE events SET fanned_out_at = now(), fanout = '{}', lease_owner = NULL WHERE seq = 2");
        db.execute("UPDATE events SET poisoned_at = now(), lease_owner = NULL WHERE seq = 3");
        db.execute("UPDATE events SET lease_owner = 'someone-else#1' WHERE seq = 4");
        JdbcOutboxStore successor = claimer("recover-0", 60_000);
        try (Connection listener = db.connect()) {
            try (Statement st = listener.createStatement()) {
                st.execute("LISTEN outbox_events_fanned");
            }
            OutboxStore.Recovered r = successor.stampRecovered(dead.owner(), new long[] {1, 2, 3, 4, 5, 6, 99},
                type -> "{\"" + type + "\": {\"recovered\": \"source offset\"}}");

            assertThat(r.stamped()).isEqualTo(2);
            assertThat(r.alreadyStamped()).isEqualTo(1);
            assertThat(r.notLeased()).containsExactly(3L, 4L, 6L);
            List<String> received = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                received.addAll(notifications(listener));
                return !received.isEmpty();
            });
            assertThat(String.join(",", received).split(",")).containsExactlyInAnyOrderElementsOf(
                db.query("SELECT id::text FROM events WHERE seq IN (1, 5)").stream().map(x -> (String) x.get(0)).toList());
        }
        String recovered = "{\"t.a\": {\"recovered\": \"source offset\"}}";
        assertThat(db.query("SELECT seq, fanout::text, lease_owner FROM events WHERE seq IN (1, 5) ORDER BY seq"))
            .containsExactly(Arrays.asList(1L, recovered, null), Arrays.asList(5L, recovered, null));
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE seq IN (3, 4, 6) AND fanned_out_at IS NOT NULL"))
            .as("poisoned, someone else's and pending rows untouched").isZero();
    }

    @Test
    void theReconciliationStampTakesOnlyRowsOfTheTasksShare() throws Exception {
        db.insertEvents(40, 40, "t.a");
        JdbcOutboxStore dead = claimer("share-0", 60_000);
        assertThat(dead.claim(40).rows()).hasSize(40);
        JdbcOutboxStore taskOneOfTwo = new JdbcOutboxStore(pool, "events", "\"events\"", "share-1", "0a", 2, 1, 60_000,
            "", null);
        OutboxStore.Recovered r = taskOneOfTwo.stampRecovered(dead.owner(), LongStream.rangeClosed(1, 40).toArray(),
            type -> "{}");
        long inShare = db.queryLong("SELECT count(*) FROM events"
            + " WHERE (hashtext(subject::text)::bigint + 2147483648) * 2 / 4294967296 = 1");
        assertThat(r.stamped()).isEqualTo((int) inShare).isBetween(1, 39);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL")).isEqualTo(inShare);
    }

    /**
     * Migration V10: the claim's index holds the subject's hash after seq, and a task's share is a range of it, so the
     * claim passes over the other shares' rows in the index. Control: with the index of before V10 (seq alone) the same
     * claim reads every one of them from the table and filters it out there.
     */
    @Test
    void aTasksClaimPassesOverTheOtherSharesRowsInTheIndexWithoutReadingThemFromTheTable() throws Exception {
        db.insertEvents(2_000, 500, "t.a");
        SubjectShare mine = SubjectShare.of(0, 2);
        String inMine = "hashtext(subject::text)::bigint + 2147483648 BETWEEN " + mine.low() + " AND " + mine.high();
        // every row of this share fanned out but its last: the other share's rows wait in line ahead of it
        db.execute("UPDATE events SET fanned_out_at = now(), fanout = '{}' WHERE " + inMine
            + " AND seq < (SELECT max(seq) FROM events WHERE " + inMine + ")");
        db.execute("VACUUM ANALYZE events");
        long ahead = db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND NOT (" + inMine + ")"
            + " AND seq < (SELECT max(seq) FROM events WHERE " + inMine + ")");
        assertThat(ahead).as("the other share's rows ahead").isGreaterThan(500);
        Map<String, String> args = Map.of("share_low", Long.toString(mine.low()), "share_high",
            Long.toString(mine.high()));

        String plan = claimPlan(args);
        assertThat(plan).containsPattern("Index Scan using events_unfanned_idx on events .*rows=1 loops=1");
        assertThat(rowsTheClaimsScanFilteredOut(plan)).as(plan).isZero();

        db.execute("DROP INDEX events_unfanned_idx; CREATE INDEX events_unfanned_idx ON events (seq)"
            + " WHERE fanned_out_at IS NULL AND poisoned_at IS NULL");
        try {
            String before = claimPlan(args);
            assertThat(rowsTheClaimsScanFilteredOut(before)).as("the control, without the hash:%n%s", before)
                .isGreaterThanOrEqualTo(ahead);
        } finally {
            db.execute("DROP INDEX events_unfanned_idx; CREATE INDEX events_unfanned_idx ON events"
                + " (seq, (hashtext(subject::text)::bigint + 2147483648)) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL");
        }
    }

    /** EXPLAIN ANALYZE of ClaimRows as a task runs it, with {@code args} for its defaults; rolled back. */
    private static String claimPlan(Map<String, String> args) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute(JdbcOutboxStore.SESSION_SETUP);
            c.setAutoCommit(false);
            ClaimStatement.prepare(st, "claim", false);
            String plan = ClaimStatement.explain(st, "(ANALYZE, BUFFERS)", "claim", ClaimStatement.args(args));
            c.rollback();
            return plan;
        }
    }

    /** The rows the claim's scan of the pending index read from the table and then filtered out. */
    private static long rowsTheClaimsScanFilteredOut(String plan) {
        String[] lines = plan.split("\n");
        long removed = 0;
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].contains("Index Scan using events_unfanned_idx")) {
                for (int j = i + 1; j < lines.length && !lines[j].contains("->"); j++) {
                    Matcher m = Pattern.compile("Rows Removed by Filter: (\\d+)").matcher(lines[j]);
                    if (m.find()) {
                        removed += Long.parseLong(m.group(1));
                    }
                }
            }
        }
        return removed;
    }

    /**
     * The stamp, the release and the poison find each row's value in their lists by a binary search over the seqs,
     * so the store sorts what it is given: lists in any order reach their own rows.
     */
    @Test
    void listsInAnyOrderReachTheirOwnRows() throws Exception {
        db.insertEvents(9, 9, "t.a");
        JdbcOutboxStore c = claimer("lists-0", 60_000);
        List<ClaimedRow> claimed = new ArrayList<>(c.claim(9).rows());
        java.util.Collections.reverse(claimed);
        c.stamp(claimed.subList(0, 3).stream()
            .map(r -> new OutboxStore.Stamp(r.seq(), "{\"seq\":" + r.seq() + "}", r.id())).toList());
        c.release(claimed.subList(3, 6).stream()
            .map(r -> new OutboxStore.Release(r.seq(), r.seq() % 2 == 0, r.seq() * 60_000, "error of " + r.seq())).toList());
        c.poison(claimed.subList(6, 9).stream().map(r -> new OutboxStore.Poison(r.seq(), "reason " + r.seq(), r.attempts()))
            .toList());
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL AND (fanout->>'seq')::bigint = seq"))
            .isEqualTo(3);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner IS NULL AND last_error = 'error of ' || seq"
            + " AND attempts = CASE WHEN seq % 2 = 0 THEN 0 ELSE 1 END"
            + " AND next_attempt_at BETWEEN now() + (seq - 1) * interval '1 minute' AND now() + seq * interval '1 minute'"))
            .as("each released row's own giveback, delay and error").isEqualTo(3);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL AND last_error = 'reason ' || seq"))
            .isEqualTo(3);
    }

    /** A stop with connector boundaries: the attempt back, the lease kept, and only for this owner's rows. */
    @Test
    void returningAnAttemptKeepsTheLease() throws Exception {
        db.insertEvents(2, 2, "t.a");
        JdbcOutboxStore c = claimer("keep-0", 60_000);
        assertThat(c.claim(2).rows()).hasSize(2);
        db.execute("UPDATE events SET lease_owner = 'other#1' WHERE seq = 2");
        c.returnAttempts(List.of(1L, 2L));
        assertThat(db.query("SELECT seq, attempts, lease_owner, lease_until > now() FROM events ORDER BY seq"))
            .containsExactly(List.of(1L, 0, c.owner(), true), List.of(2L, 1, "other#1", true));
    }

    /** The payloads of the notifications {@code listener} received since the last call. */
    static List<String> notifications(Connection listener) throws SQLException {
        try (Statement st = listener.createStatement()) {
            st.execute("SELECT 1"); // the driver reads pending notifications with a round trip
        }
        PGNotification[] n = listener.unwrap(PGConnection.class).getNotifications();
        List<String> out = new ArrayList<>();
        if (n != null) {
            for (PGNotification x : n) {
                out.add(x.getParameter());
            }
        }
        return out;
    }

    @Test
    void headersAreSplitExactlyAsPostgresSplitsThem() throws Exception {
        String[] headers = {
            "{\"trace\": \"abc\", \"A\": \"x y\", \"b\": 1}",
            "{\"esc\\\"aped\": \"tab\\there \\u00e9 \\ud83d\\ude00 \\\\ / \\\"q\\\"\"}",
            "{\"nested\": {\"k\": \"v, }\", \"arr\": [1, {\"b\": \"]\"}]}, \"nil\": null, \"f\": false, \"n\": -1.5e3}",
            "{}"};
        for (String h : headers) {
            db.execute("INSERT INTO events(type, subject, payload, headers) VALUES ('t.a', 's',"
                + " '{\"name\": \"\u00e9\u20ac\ud83d\ude00\"}', '" + h.replace("'", "''") + "'::jsonb)");
        }
        List<ClaimedRow> rows = claimer("headers-0", 60_000).claim(10).rows();
        assertThat(rows).hasSize(headers.length);
        for (ClaimedRow row : rows) {
            // what the claim computed in SQL before the split moved into the task
            List<List<Object>> expected = db.query("SELECT kv.key, CASE WHEN jsonb_typeof(kv.value) = 'string'"
                + " THEN kv.value #>> '{}' ELSE kv.value::text END FROM events, jsonb_each(headers) kv"
                + " WHERE seq = ? ORDER BY kv.key COLLATE \"C\"", row.seq());
            assertThat(row.headersType()).isEqualTo("object");
            assertThat(row.headerKeys()).containsExactlyElementsOf(expected.stream().map(r -> (String) r.get(0)).toList());
            assertThat(row.headerValues()).containsExactlyElementsOf(
                expected.stream().map(r -> (String) r.get(1)).toList());
            assertThat(row.payloadBytes()).isEqualTo(db.queryLong(
                "SELECT octet_length(payload::text) FROM events WHERE seq = ?", row.seq()));
        }
    }

    @Test
    void wakingTheTasksNotifiesTheirChannel() throws Exception {
        try (Connection listener = db.connect()) {
            try (Statement st = listener.createStatement()) {
                st.execute("LISTEN outbox_events");
            }
            claimer("wake-0", 60_000).wake("outbox_events");
            List<String> received = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                received.addAll(notifications(listener));
                return !received.isEmpty();
            });
            assertThat(received).containsExactly("");
        }
    }

    /**
     * A stop that gave rows back wakes the tasks as a writer's clear does: besides its NOTIFY it takes the flag down
     * and counts the clear, which tasks of earlier versions read at their looks (this version's looks claim).
     */
    @Test
    void wakingTheTasksTakesTheFlagDownAndCountsTheClear() throws Exception {
        WakeupFlag.of(pool, "events").arm();
        long token = db.queryLong("SELECT COALESCE(pg_sequence_last_value('events_wakeup_clears'), 0)");

        claimer("wake-0", 60_000).wake("outbox_events");
        assertThat(db.queryLong("SELECT last_value FROM events_wakeup")).as("the flag is down").isZero();
        assertThat(db.queryLong("SELECT COALESCE(pg_sequence_last_value('events_wakeup_clears'), 0)"))
            .as("and the clear counted: another task's arming would hide a flag down alone").isEqualTo(token + 1);
    }

    /**
     * A role without the grant migration V9 gives (UPDATE on the count) still wakes the tasks with its NOTIFY, never an
     * error that would skip it, and leaves the flag up: taken down without a count, the next arming would hide it from
     * a waiting task, and a writer that then read it down would count nothing either.
     */
    @Test
    void aRoleThatMayNotAddToTheCountStillWakesTheTasks() throws Exception {
        String role = "wake_v8_" + System.nanoTime();
        db.execute("CREATE ROLE " + role + " LOGIN IN ROLE outbox_relay");
        db.execute("REVOKE UPDATE ON SEQUENCE events_wakeup_clears FROM outbox_relay");
        try (HikariDataSource asRole = new TestDatabase(db.name(), db.jdbcUrl(), role, db.password()).pool(role, 1);
             Connection listener = db.connect()) {
            try (Statement st = listener.createStatement()) {
                st.execute("LISTEN outbox_events");
            }
            WakeupFlag.of(pool, "events").arm();
            long token = db.queryLong("SELECT COALESCE(pg_sequence_last_value('events_wakeup_clears'), 0)");
            new JdbcOutboxStore(asRole, "events", "\"events\"", "wake-1", "0b", 1, 0, 60_000, "outbox_events_fanned",
                null).wake("outbox_events");
            List<String> received = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                received.addAll(notifications(listener));
                return !received.isEmpty();
            });
            assertThat(db.queryLong("SELECT COALESCE(pg_sequence_last_value('events_wakeup_clears'), 0)"))
                .as("not counted: the role may not").isEqualTo(token);
            assertThat(db.queryLong("SELECT last_value FROM events_wakeup")).as("the flag stays up").isEqualTo(1);
        } finally {
            db.execute("SELECT setval('events_wakeup', 0, true)");
            db.execute("GRANT UPDATE ON SEQUENCE events_wakeup_clears TO outbox_relay");
            db.execute("DROP ROLE " + role);
        }
    }

    /**
     * The relay's sessions keep a generic plan of the claim for as long as they live (SessionSetup). Made on
     * a table of a few rows, it must still read the table by index once the table has grown: the claim reads
     * the partial index in seq order, and the stamp and the lease update read the primary key for their seqs
     * only. The negative controls are the same session with fewer settings: without sequential scans turned
     * off it keeps a sequential scan of the whole table for every claim, and with only that, it reads the whole
     * primary key for the stamp, or the partial index as a bitmap (every entry, dead ones included); and the
     * stamp joined to its seqs instead of naming them reads the whole primary key. (The lease update names
     * its seqs and nothing else: PartitionedOutboxIT.)
     */
    @Test
    void aClaimPlannedOnATinyTableStillReadsTheTableByIndexOnceTheTableGrew() throws Exception {
        for (boolean analyzed : new boolean[] {true, false}) {
            String plan = claimPlanAfterGrowth(JdbcOutboxStore.SESSION_SETUP, sql -> sql, analyzed);
            assertThat(plan).containsPattern("Index Scan using \\w+ on events").doesNotContain("Seq Scan on events")
                .doesNotContain("Bitmap");
            assertThat(wholeIndexReads(plan)).as(plan).isEmpty();
        }
        assertThat(claimPlanAfterGrowth("SET plan_cache_mode = force_generic_plan", sql -> sql, true))
            .as("the negative control without any scan turned off").contains("Seq Scan on events");
        String unguarded = claimPlanAfterGrowth(JdbcOutboxStore.SESSION_SETUP,
            sql -> replaceOnce(sql, "   WHERE e.seq = ANY(?::bigint[]) AND e.fanned_out_at IS NULL",
                "    FROM unnest(?::bigint[]) AS x(seq) WHERE e.seq = x.seq AND e.fanned_out_at IS NULL"), true);
        assertThat(wholeIndexReads(unguarded)).as("the negative control, the stamp joined to its seqs:%n%s", unguarded)
            .isNotEmpty();
        String bitmaps = claimPlanAfterGrowth("SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off",
            sql -> sql, false);
        assertThat(bitmaps).as("the negative control with bitmaps allowed").contains("Bitmap Heap Scan on events");
    }

    /** {@code sql} with its one {@code target} replaced: a control whose edit missed would prove nothing. */
    private static String replaceOnce(String sql, String target, String replacement) {
        assertThat(sql.split(Pattern.quote(target), -1)).as("occurrences of %s", target).hasSize(2);
        return sql.replace(target, replacement);
    }

    /** The scans of the plan that read events' primary key without an index condition: all of it. */
    private static List<String> wholeIndexReads(String plan) {
        String[] lines = plan.split("\n");
        List<String> whole = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].matches(".*Index Scan using \\w*pkey on events.*")
                && (i + 1 == lines.length || !lines[i + 1].contains("Index Cond"))) {
                whole.add(lines[i].trim());
            }
        }
        return whole;
    }

    /**
     * EXPLAIN of ClaimRows ({@code edit} applied to its SQL) prepared and run once on 20 rows (of the table,
     * analyzed, or of a table just made), after 20,000 more were fanned out.
     */
    private static String claimPlanAfterGrowth(String sessionSetup, java.util.function.UnaryOperator<String> edit,
                                               boolean analyzed) throws SQLException {
        if (analyzed) {
            db.execute("TRUNCATE events RESTART IDENTITY");
            db.insertEvents(20, 20, "t.a");
            db.execute("ANALYZE events");
        } else { // a table made anew, whose size PostgreSQL guesses: the relay's first minute on a fresh table
            db.execute("ALTER TABLE events RENAME TO events_kept");
            db.execute("CREATE TABLE events (LIKE events_kept INCLUDING ALL)");
            db.insertEvents(20, 20, "t.a");
        }
        try {
            return claimPlanAfterGrowth(sessionSetup, edit);
        } finally {
            if (!analyzed) {
                db.execute("DROP TABLE events");
                db.execute("ALTER TABLE events_kept RENAME TO events");
            }
        }
    }

    private static String claimPlanAfterGrowth(String sessionSetup, java.util.function.UnaryOperator<String> edit)
        throws SQLException {
        String args = ClaimStatement.args(java.util.Map.of());
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute(sessionSetup);
            ClaimStatement.prepare(st, "claim", edit);
            st.execute("EXECUTE claim(" + args + ")"); // the plan is made now, on 20 rows
            db.insertEvents(20_000, 1_000, "t.a");
            db.execute("UPDATE events SET fanned_out_at = now(), fanout = '{}' WHERE seq > 20");
            String plan = ClaimStatement.explain(st, "", "claim", args);
            st.execute("DEALLOCATE claim");
            return plan;
        }
    }
}
