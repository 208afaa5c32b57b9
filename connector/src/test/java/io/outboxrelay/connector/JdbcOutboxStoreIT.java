package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

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
        db.execute("TRUNCATE events");
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
        Set<Long> claimed = ConcurrentHashMap.newKeySet();
        List<Long> duplicates = new ArrayList<>();
        ExecutorService pool4 = Executors.newFixedThreadPool(4);
        List<Future<Integer>> maxBatch = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            JdbcOutboxStore c = claimer("claimer-" + t, 60_000);
            maxBatch.add(pool4.submit(() -> {
                int largest = 0;
                while (true) {
                    List<ClaimedRow> rows = c.claim(true, 100);
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
    void aCrashedClaimersRowsAreClaimedAgainOnceTheLeaseExpires() throws Exception {
        db.insertEvents(3, 3, "t.a");
        JdbcOutboxStore crashed = claimer("crashed-0", 1_000);
        assertThat(crashed.claim(true, 10)).hasSize(3); // and then it dies without stamping

        JdbcOutboxStore survivor = claimer("survivor-0", 60_000);
        assertThat(survivor.claim(true, 10)).isEmpty();
        assertThat(survivor.claim(false, 1)).as("leases still valid").isEmpty();

        List<Long> reclaimed = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            survivor.claim(false, 1).forEach(r -> reclaimed.add(r.seq()));
            return reclaimed.size() == 3;
        });
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE attempts = 2 AND lease_owner = ?", survivor.owner()))
            .isEqualTo(3);
    }

    @Test
    void aRestartedTaskTakesItsEarlierIncarnationsLeasesBackAtOnceAndNoOneElses() throws Exception {
        db.insertEvents(4, 4, "t.a");
        JdbcOutboxStore before = claimer("relay-0", 600_000);
        List<ClaimedRow> leasedBefore = before.claim(true, 10);
        assertThat(leasedBefore).hasSize(4);
        // other tasks' leases: another task, a connector whose name extends this task's owner (leasing as this
        // version does and as versions without incarnations did), and a row leased by such a version under
        // this task's own name (that one is taken back too)
        db.insertEvents(4, 4, "t.a");
        assertThat(claimer("relay-1", 600_000).claim(true, 1)).hasSize(1);
        assertThat(claimer("relay-0#x-0", 600_000).claim(true, 1)).hasSize(1);
        db.execute("UPDATE events SET lease_owner = 'relay-0#ab-3', lease_until = now() + interval '10 minutes', "
            + "attempts = 1 WHERE seq = (SELECT max(seq) - 1 FROM events)");
        db.execute("UPDATE events SET lease_owner = 'relay-0', lease_until = now() + interval '10 minutes', "
            + "attempts = 1 WHERE seq = (SELECT max(seq) FROM events)");

        JdbcOutboxStore restarted = claimer("relay-0", 600_000);
        assertThat(restarted.takeBackPreviousIncarnations()).isEqualTo(5);
        List<ClaimedRow> again = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            again.addAll(restarted.claim(false, 1)); // attempted before: retried one by one
        }
        assertThat(again).hasSize(5).extracting(ClaimedRow::attempts).containsOnly(2);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner LIKE 'relay-1#%'")).isEqualTo(1);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner LIKE 'relay-0#x-0#%'")).isEqualTo(1);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner = 'relay-0#ab-3'")).isEqualTo(1);

        // its own leases stay; the earlier incarnation, still stopping, can no longer release them
        assertThat(restarted.takeBackPreviousIncarnations()).isZero();
        before.release(leasedBefore.stream().map(r -> OutboxStore.Release.now(r.seq(), false)).toList());
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner = ?", restarted.owner()))
            .isEqualTo(5);
    }

    @Test
    void rowsOfAClaimWhoseResultWasLostComeBackWithTheirAttemptReturnedOnce() throws Exception {
        db.insertEvents(3, 3, "t.a");
        JdbcOutboxStore task = claimer("lost-0", 600_000);
        List<ClaimedRow> held = task.claim(true, 1);
        long heldSeq = held.get(0).seq();
        assertThat(task.claim(true, 10)).as("committed, but the task never saw this result").hasSize(2);
        db.insertEvents(1, 1, "t.a");
        JdbcOutboxStore nextIncarnation = claimer("lost-0", 600_000);
        assertThat(nextIncarnation.claim(true, 10)).hasSize(1);

        List<Long> released = task.takeBackUnknownLeases(List.of(heldSeq), List.of()).stream()
            .map(OutboxStore.TakenBack::seq).toList();
        assertThat(released).hasSize(2).doesNotContain(heldSeq);
        List<ClaimedRow> again = task.claim(true, 10);
        assertThat(again).as("never attempted as far as Connect is concerned: fresh, in one batch").hasSize(2);
        assertThat(again).extracting(ClaimedRow::attempts).containsOnly(1);
        assertThat(db.queryLong("SELECT attempts FROM events WHERE seq = ?", heldSeq))
            .as("the held row is untouched").isEqualTo(1);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner = ?", nextIncarnation.owner()))
            .as("another incarnation's lease is untouched").isEqualTo(1);

        // lost a second time: rows whose attempt came back once keep it, and are retried alone
        assertThat(task.takeBackUnknownLeases(List.of(heldSeq), released))
            .extracting(OutboxStore.TakenBack::attempts).containsOnly(1);
        assertThat(task.claim(true, 10)).isEmpty();
        assertThat(task.claim(false, 1)).singleElement().extracting(ClaimedRow::attempts).isEqualTo(2);
    }

    @Test
    void theStampSkipsRowsAlreadyStampedAndNotifiesReceipts() throws Exception {
        db.insertEvents(2, 2, "t.a");
        JdbcOutboxStore c = claimer("stamp-0", 60_000);
        List<ClaimedRow> rows = c.claim(true, 10);
        assertThat(c.stamp(rows.stream().map(r -> new OutboxStore.Stamp(r.seq(), "{}", r.id())).toList())).isEqualTo(2);
        assertThat(c.stamp(rows.stream().map(r -> new OutboxStore.Stamp(r.seq(), "{\"x\":1}", r.id())).toList()))
            .isZero();
        assertThat(db.query("SELECT DISTINCT fanout::text FROM events")).containsExactly(List.of("{}"));
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
        List<ClaimedRow> rows = claimer("headers-0", 60_000).claim(true, 10);
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
}
