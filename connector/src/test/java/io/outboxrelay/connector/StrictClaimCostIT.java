package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What outbox.ordering=strict costs a claim and a drain, on the relay's own statement (docs/ordering.md, "What it
 * costs"): EXPLAIN ANALYZE of ClaimRows as a default and as a strict task runs it, with and without the subject
 * index of migration V7, on 100,000 pending rows of 10,000 subjects of which 100 back off; and drains, claim and stamp in one statement as
 * a pass does, acknowledged at once (so without the producer's round trip a real drain adds per claim). The numbers
 * are printed for the docs; what is asserted is what cannot vary: the plans and the claims a drain needs.
 */
class StrictClaimCostIT {
    private static final Pattern EXECUTION = Pattern.compile("Execution Time: ([0-9.]+) ms");
    private static TestDatabase db;
    private static HikariDataSource pool;
    private static int incarnations;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("strict_cost");
        pool = db.pool("strict-cost-it", 2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    /** 100,000 rows of 10,000 subjects in line; the first row of every 100th subject backs off. */
    private static void pendingRowsSomeBackingOff() {
        db.execute("TRUNCATE events RESTART IDENTITY");
        db.insertEvents(100_000, 10_000, "order.created", "order.paid");
        db.execute("UPDATE events SET attempts = 1, next_attempt_at = now() + interval '1 hour'"
            + " WHERE seq <= 10000 AND seq % 100 = 0");
        db.execute("VACUUM ANALYZE events");
    }

    /** The median execution time of five claims of {@code limit} rows, each rolled back, and the last plan. */
    private static String[] claimCost(boolean strict, boolean index, int limit) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute(JdbcOutboxStore.SESSION_SETUP);
            c.setAutoCommit(false);
            if (!index) {
                st.execute("DROP INDEX events_subject_pending_idx");
            }
            ClaimStatement.prepare(st, "claim", strict);
            String args = ClaimStatement.args(Map.of("limit", Integer.toString(limit)), strict);
            double[] ms = new double[5];
            String plan = "";
            for (int i = 0; i < ms.length; i++) {
                st.execute("SAVEPOINT run");
                plan = ClaimStatement.explain(st, "(ANALYZE, BUFFERS)", "claim", args);
                st.execute("ROLLBACK TO SAVEPOINT run");
                Matcher m = EXECUTION.matcher(plan);
                assertThat(m.find()).as(plan).isTrue();
                ms[i] = Double.parseDouble(m.group(1));
            }
            c.rollback(); // the index, if dropped, is back
            Arrays.sort(ms);
            return new String[] {Double.toString(ms[2]), plan};
        }
    }

    @Test
    void theStrictClaimReadsTheSubjectIndexAndTheDefaultClaimIsTheOneOfBefore() throws SQLException {
        pendingRowsSomeBackingOff();
        String[] plain = claimCost(false, true, 200);
        String[] strict = claimCost(true, true, 200);
        String[] strictNoIndex = claimCost(true, false, 200);
        String[] plain1000 = claimCost(false, true, 1000);
        String[] strict1000 = claimCost(true, true, 1000);
        System.out.printf("strict claim cost, 100k pending, 10k subjects, 100 backing off (median ms of 5):%n"
            + "  limit 200: default %s, strict %s, strict without the V7 index %s%n"
            + "  limit 1000: default %s, strict %s%n", plain[0], strict[0], strictNoIndex[0], plain1000[0], strict1000[0]);
        System.out.println("strict plan:\n" + strict[1]);

        assertThat(strict[1]).contains("events_subject_pending_idx");
        assertThat(plain[1]).as("best-effort: the claim of today, without the probe")
            .doesNotContain("events_subject_pending_idx");
        assertThat(strictNoIndex[1]).doesNotContain("events_subject_pending_idx");
    }

    private static JdbcOutboxStore store(boolean strict) {
        return new JdbcOutboxStore(pool, "events", "\"events\"", OutboxColumns.DEFAULT, "cost-0",
            String.format("%08x", ++incarnations), 1, 0, 60_000, "", null,
            new JdbcOutboxStore.ClaimLimits(5, 1_000_000, 8_000_000, strict));
    }

    /** Claims of up to 1000 rows, each stamping the rows of the one before, until one finds nothing. */
    private static long[] drain(boolean strict) throws SQLException {
        JdbcOutboxStore store = store(strict);
        List<OutboxStore.Stamp> stamps = List.of();
        long claims = 0;
        long start = System.nanoTime();
        while (true) {
            OutboxStore.Claim claim = store.pass(new OutboxStore.Pass(stamps, 1000)).claim();
            claims++;
            if (claim.rows().isEmpty()) {
                break;
            }
            List<OutboxStore.Stamp> next = new ArrayList<>(claim.rows().size());
            claim.rows().forEach(r -> next.add(new OutboxStore.Stamp(r.seq(), "{}", r.id())));
            stamps = next;
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL")).isZero();
        return new long[] {claims, ms};
    }

    @Test
    void aDrainOfManySubjectsNeedsAboutTheClaimsOfTheDefaultOneOfAHotSubjectOneClaimPerRow() throws SQLException {
        db.execute("TRUNCATE events RESTART IDENTITY");
        db.insertEvents(20_000, 2_000, "order.created");
        db.execute("VACUUM ANALYZE events");
        long[] plain = drain(false);
        db.execute("UPDATE events SET fanned_out_at = NULL, fanout = NULL, attempts = 0");
        db.execute("VACUUM ANALYZE events");
        long[] strict = drain(true);

        db.execute("TRUNCATE events RESTART IDENTITY");
        db.insertEvents(1_000, 1, "order.created");
        db.execute("VACUUM ANALYZE events");
        long[] hotPlain = drain(false);
        db.execute("UPDATE events SET fanned_out_at = NULL, fanout = NULL, attempts = 0");
        db.execute("VACUUM ANALYZE events");
        long[] hotStrict = drain(true);
        System.out.printf("drain, acknowledged at once (claims, ms): 20k rows of 2k subjects: default %d/%d,"
            + " strict %d/%d; 1000 rows of one subject: default %d/%d, strict %d/%d%n", plain[0], plain[1], strict[0],
            strict[1], hotPlain[0], hotPlain[1], hotStrict[0], hotStrict[1]);

        assertThat(strict[0]).as("claims of a drain of many subjects").isLessThanOrEqualTo(plain[0] + 1);
        assertThat(hotStrict[0]).as("one subject: a row per claim").isEqualTo(1_000 + 1);
        assertThat(hotPlain[0]).isEqualTo(1 + 1);
    }
}
