package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The claim of outbox.ordering=strict against a real PostgreSQL (docs/ordering.md): a row is claimed only when no
 * earlier row of its subject is pending, so a row that backs off, is leased by another task or is in flight here
 * holds its subject's later rows back, and its stamp or poisoning releases them. Each rule beside the negative
 * control: the default claim, which takes those later rows.
 */
class StrictClaimIT {
    private static TestDatabase db;
    private static HikariDataSource pool;
    private static int incarnations;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("strict_claim");
        pool = db.pool("strict-claim-it", 4);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    @BeforeEach
    void emptyOutbox() {
        db.execute("TRUNCATE events RESTART IDENTITY");
        // seq 1 created a, 2 created b, 3 paid a, 4 paid b, 5 shipped a
        db.execute("INSERT INTO events(type, subject) VALUES ('order.created', 'a'), ('order.created', 'b'),"
            + " ('order.paid', 'a'), ('order.paid', 'b'), ('order.shipped', 'a')");
    }

    private static JdbcOutboxStore claimer(String owner, boolean strict) {
        return new JdbcOutboxStore(pool, "events", "\"events\"", OutboxColumns.DEFAULT, owner,
            String.format("%08x", ++incarnations), 1, 0, 60_000, "", null,
            new JdbcOutboxStore.ClaimLimits(5, 1_000_000, 8_000_000, strict));
    }

    private static List<Long> seqs(OutboxStore.Claim claim) {
        return claim.rows().stream().map(ClaimedRow::seq).toList();
    }

    /** Stamps {@code seq} in the claim's own statement, as a pass does, and claims up to 10 rows. */
    private static List<Long> stampAndClaim(JdbcOutboxStore store, long seq) throws SQLException {
        String id = (String) db.query("SELECT id::text FROM events WHERE seq = ?", seq).get(0).get(0);
        return seqs(store.pass(new OutboxStore.Pass(List.of(new OutboxStore.Stamp(seq, "{}", id)), 10)).claim());
    }

    @Test
    void aClaimTakesOneRowPerSubjectTheOneFirstInItsLine() throws SQLException {
        assertThat(seqs(claimer("strict-0", true).claim(10))).containsExactly(1L, 2L);
        db.execute("UPDATE events SET lease_owner = NULL, lease_until = NULL, attempts = 0");
        assertThat(seqs(claimer("default-0", false).claim(10))).as("the default claim").containsExactly(1L, 2L, 3L,
            4L, 5L);
    }

    @Test
    void aRowInFlightHoldsItsSubjectBackUntilItsStampGoesWithTheNextClaim() throws SQLException {
        JdbcOutboxStore strict = claimer("strict-0", true);
        assertThat(seqs(strict.claim(10))).containsExactly(1L, 2L);
        assertThat(seqs(strict.claim(10))).as("1 and 2 in flight, unacknowledged").isEmpty();
        assertThat(stampAndClaim(strict, 1)).as("1 stamped by this statement: its subject's next row").containsExactly(3L);
        assertThat(stampAndClaim(strict, 3)).containsExactly(5L);
    }

    @Test
    void aRowThatBacksOffHoldsItsSubjectBackWhileOtherSubjectsFlowAndItsDeliveryReleasesIt() throws SQLException {
        JdbcOutboxStore strict = claimer("strict-0", true);
        assertThat(seqs(strict.claim(10))).containsExactly(1L, 2L);
        strict.release(List.of(new OutboxStore.Release(1, false, 60_000, "test: refused")));
        assertThat(stampAndClaim(strict, 2)).as("b goes on; a waits for its row 1").containsExactly(4L);
        assertThat(seqs(claimer("strict-1", true).claim(10))).as("another strict task waits too").isEmpty();

        db.execute("UPDATE events SET next_attempt_at = now() - interval '1 second' WHERE seq = 1"); // backoff over
        assertThat(seqs(strict.claim(10))).as("the retried row is claimed alone, first").containsExactly(1L);
        assertThat(stampAndClaim(strict, 1)).containsExactly(3L);
    }

    @Test
    void theDefaultClaimSendsASubjectsLaterRowsWhileItsEarlierRowBacksOff() throws SQLException {
        JdbcOutboxStore plain = claimer("default-0", false);
        assertThat(seqs(plain.claim(1))).containsExactly(1L);
        plain.release(List.of(new OutboxStore.Release(1, false, 60_000, "test: refused")));
        assertThat(seqs(plain.claim(10))).as("paid a (3) before created a (1): guarantee 4 only")
            .containsExactly(2L, 3L, 4L, 5L);
    }

    @Test
    void aRowLeasedByAnotherTaskHoldsItsSubjectBack() throws SQLException {
        assertThat(seqs(claimer("strict-0", true).claim(1))).containsExactly(1L);
        assertThat(seqs(claimer("strict-1", true).claim(10))).containsExactly(2L);
        assertThat(seqs(claimer("default-1", false).claim(10))).as("the default claim").containsExactly(3L, 4L, 5L);
    }

    @Test
    void aPoisonedRowReleasesItsSubject() throws SQLException {
        JdbcOutboxStore strict = claimer("strict-0", true);
        assertThat(seqs(strict.claim(10))).containsExactly(1L, 2L);
        strict.release(List.of(new OutboxStore.Release(1, false, 60_000, "test: refused")));
        assertThat(seqs(strict.claim(10))).isEmpty();

        List<PoisonedRow> poisoned = strict.poison(List.of(new OutboxStore.Poison(1, "test: poisoned", 1)));
        assertThat(poisoned).extracting(PoisonedRow::seq, PoisonedRow::subject).containsExactly(
            org.assertj.core.groups.Tuple.tuple(1L, "a"));
        assertThat(seqs(strict.claim(10))).containsExactly(3L);
    }
}
