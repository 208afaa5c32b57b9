package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.NamedSql;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Housekeeping reads a bounded part of a huge backlog (issue 24: at 50 million pending rows the recovery of
 * unknown leases hit the statement timeout in every pass after a failure, and the backlog probe counted for
 * longer than its interval). Checked by what PostgreSQL says the statements read, on a backlog larger than
 * their bounds: no statement may scan every pending row.
 */
class HousekeepingStaysCheapIT {
    private static final NamedSql SQL = NamedSql.load(JdbcOutboxStore.class, "outbox-relay.sql");
    private static final int BACKLOG = 150_000;
    private static final String OWNER = "housekeeping-0#1";
    private static TestDatabase db;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("housekeeping");
        db.insertEvents(BACKLOG, 1_000, "order.created");
        db.execute("VACUUM ANALYZE events");
        pool = db.pool("housekeeping-it", 2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    private static JdbcOutboxStore store() {
        return new JdbcOutboxStore(pool, "events", "\"events\"", "housekeeping-0", "1", 1, 0, 60_000, "", null);
    }

    /**
     * The most rows any scan of {@code statement}'s plan returned, as EXPLAIN ANALYZE reports them (rolled
     * back: it runs the statement); {@code params} bind its named parameters.
     */
    private static long mostRowsScanned(String statement, Map<String, Object> params) throws SQLException {
        NamedSql.Bindable sql = SQL.bindable(statement, "\"events\"", OutboxColumns.DEFAULT::expand);
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, FORMAT JSON) " + sql.sql())) {
                for (Map.Entry<String, Object> p : params.entrySet()) {
                    Object value = p.getValue() instanceof long[] seqs ? bigints(c, seqs) : p.getValue();
                    sql.set(ps, p.getKey(), value);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return mostRows(new ObjectMapper().readTree(rs.getString(1)).get(0).get("Plan"));
                }
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            } finally {
                c.rollback();
            }
        }
    }

    private static Array bigints(Connection c, long[] seqs) throws SQLException {
        Long[] boxed = new Long[seqs.length];
        for (int i = 0; i < seqs.length; i++) {
            boxed[i] = seqs[i];
        }
        return c.createArrayOf("bigint", boxed);
    }

    private static long mostRows(JsonNode plan) {
        long most = plan.get("Node Type").asText().contains("Scan")
            ? plan.get("Actual Rows").asLong() * plan.get("Actual Loops").asLong() : 0;
        if (plan.has("Plans")) {
            for (JsonNode child : plan.get("Plans")) {
                most = Math.max(most, mostRows(child));
            }
        }
        return most;
    }

    @Test
    void theBacklogProbeCountsABoundedPartOfAHugeBacklogAndEstimatesTheRest() throws Exception {
        long scanned = mostRowsScanned("Backlog", Map.of("exact_max", JdbcOutboxStore.BACKLOG_EXACT_ROWS,
            "table", "\"events\""));

        assertThat(scanned).isLessThanOrEqualTo(JdbcOutboxStore.BACKLOG_EXACT_ROWS);
        OutboxStore.Backlog backlog = store().backlog();
        assertThat(backlog.rows()).as("PostgreSQL's estimate for the claim index, from VACUUM ANALYZE")
            .isBetween((long) BACKLOG * 9 / 10, (long) BACKLOG * 11 / 10);
    }

    @Test
    void theBacklogBelowTheBoundIsCountedExactly() throws Exception {
        TestDatabase small = TestPostgres.get().createDatabase("housekeeping_small");
        small.insertEvents(1_234, 10, "order.created");
        try (HikariDataSource smallPool = small.pool("housekeeping-small-it", 1)) {
            OutboxStore.Backlog backlog = new JdbcOutboxStore(smallPool, "events", "\"events\"", "housekeeping-0", "1",
                1, 0, 60_000, "", null).backlog();
            assertThat(backlog.rows()).isEqualTo(1_234);
        }
    }

    /**
     * A lost claim leased rows near the head of the line, where claims take them: the recovery looks there
     * only, so a row of this incarnation leased further back is left to its lease (it expires and the row is
     * claimed again, its attempt counted) instead of making every recovery read the whole line.
     */
    @Test
    void theRecoveryOfUnknownLeasesLooksAtTheHeadOfTheLineOnly() throws Exception {
        long head = 10;
        long farBack = BACKLOG - 10;
        db.execute("UPDATE events SET lease_owner = '" + OWNER + "', lease_until = now() + interval '1 minute',"
            + " attempts = 1 WHERE seq IN (" + head + ", " + farBack + ")");
        try {
            long scanned = mostRowsScanned("ReleaseUnknownLeases", Map.of("keep_attempt", new long[0],
                "owner", OWNER, "held", new long[0], "examine", JdbcOutboxStore.UNKNOWN_LEASE_SCAN_ROWS));
            assertThat(scanned).isLessThanOrEqualTo(JdbcOutboxStore.UNKNOWN_LEASE_SCAN_ROWS);

            List<OutboxStore.TakenBack> taken = store().takeBackUnknownLeases(List.of(), List.of());
            assertThat(taken).extracting(OutboxStore.TakenBack::seq).containsExactly(head);
            assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner IS NOT NULL AND seq = ?", farBack))
                .as("left to its lease").isEqualTo(1);
        } finally {
            db.execute("UPDATE events SET lease_owner = NULL, lease_until = NULL, attempts = 0"
                + " WHERE seq IN (" + head + ", " + farBack + ")");
        }
    }
}
