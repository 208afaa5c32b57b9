package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.NamedSql;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An outbox partitioned by day (V5) on real PostgreSQL: retention drops whole old partitions but keeps one
 * holding a pending row and one holding a poisoned row, housekeeping makes the partitions ahead,
 * {@code validate()} accepts the table, and the relay's statements read indexes on every partition under the
 * relay's session settings.
 */
class PartitionedOutboxIT {
    /** A start far enough back that the first run is due at once. */
    private static final long STARTED = -RelayMaintenance.FIRST_BACKLOG_DELAY_MS;
    private static final long THREE_DAYS_MS = 3 * 86_400_000L;

    private static TestDatabase db;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createEmptyDatabase("partitioned");
        db.runScript(TestPostgres.schemaFile("outbox.sql"), Map.of("partitioned", "daily"));
        pool = db.pool("partitioned-it", 2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    private static OutboxStore store() {
        return new JdbcOutboxStore(pool, "events", "\"events\"", "partitioned-0", "1", 1, 0, 60_000, "", null);
    }

    /** A partition of the day {@code daysAgo} days before today (UTC), added by hand as an operator would. */
    private static void oldPartition(String name, int daysAgo) {
        db.execute("DO $$ BEGIN EXECUTE format('CREATE TABLE " + name + " PARTITION OF events FOR VALUES FROM (%L) TO (%L)',"
            + " ((now() AT TIME ZONE 'UTC')::date - " + daysAgo + ")::timestamp AT TIME ZONE 'UTC',"
            + " ((now() AT TIME ZONE 'UTC')::date - " + (daysAgo - 1) + ")::timestamp AT TIME ZONE 'UTC'); END $$");
        db.execute("INSERT INTO events(type, subject, occurred_at, fanned_out_at, fanout) SELECT 't.a', 'old-' || g,"
            + " ((now() AT TIME ZONE 'UTC')::date - " + daysAgo + ")::timestamp AT TIME ZONE 'UTC' + interval '2 hours',"
            + " now(), '{}' FROM generate_series(1, 50) g");
    }

    private static long partitionExists(String name) {
        return db.queryLong("SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass"
            + " AND inhrelid::regclass::text = ?", name);
    }

    @Test
    void retentionDropsOldPartitionsButKeepsOneWithAPendingRowAndOneWithAPoisonedRow() throws SQLException {
        oldPartition("events_old_empty", 10);
        oldPartition("events_old_pending", 9);
        oldPartition("events_old_poisoned", 8);
        db.execute("INSERT INTO events(type, subject, occurred_at) VALUES ('t.a', 'still-pending',"
            + " ((now() AT TIME ZONE 'UTC')::date - 9)::timestamp AT TIME ZONE 'UTC' + interval '3 hours')");
        db.execute("INSERT INTO events(type, subject, occurred_at, poisoned_at, last_error)"
            + " VALUES ('t.a', 'poisoned', ((now() AT TIME ZONE 'UTC')::date - 8)::timestamp AT TIME ZONE 'UTC' + interval '3 hours',"
            + " now(), 'boom')");
        long idsBefore = db.queryLong("SELECT count(*) FROM events_ids");

        RelayMetrics metrics = new RelayMetrics();
        RelayMaintenance maintenance = new RelayMaintenance(store(), THREE_DAYS_MS, 60_000, true, metrics, STARTED,
            Runnable::run);
        maintenance.run(0);

        assertThat(partitionExists("events_old_empty")).isZero();
        assertThat(partitionExists("events_old_pending")).isOne();
        assertThat(partitionExists("events_old_poisoned")).isOne();
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE subject IN ('still-pending', 'poisoned')")).isEqualTo(2);
        assertThat(db.queryLong("SELECT count(*) FROM events_ids")).as("the dropped partition's ids left with it")
            .isEqualTo(idsBefore - 50);
        assertThat(metrics.value("partitions-dropped-total")).isEqualTo(1);
        assertThat(metrics.partitionsKept.get()).isEqualTo(2);
        // today's and the coming partitions are not past retention
        assertThat(db.queryLong("SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass")).isEqualTo(11);

        // negative control: dropping by age alone, as a naive partition retention does, loses the pending row
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            c.setAutoCommit(false);
            st.execute("DROP TABLE events_old_pending");
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM events WHERE subject = 'still-pending'")) {
                rs.next();
                assertThat(rs.getLong(1)).isZero();
            }
            c.rollback();
        }

        // once the pending row is fanned out and the poisoned one requeued and fanned, both partitions go
        db.execute("UPDATE events SET fanned_out_at = now(), fanout = '{}' WHERE subject = 'still-pending'");
        assertThat(db.queryLong("SELECT count(*) FROM (SELECT events_requeue(seq) AS r FROM events WHERE subject = 'poisoned') q"
            + " WHERE r")).isOne();
        db.execute("UPDATE events SET fanned_out_at = now(), fanout = '{}' WHERE subject = 'poisoned'");
        maintenance.run(60_000);
        assertThat(partitionExists("events_old_pending") + partitionExists("events_old_poisoned")).isZero();
        assertThat(metrics.value("partitions-dropped-total")).isEqualTo(3);
        assertThat(metrics.partitionsKept.get()).isZero();
    }

    @Test
    void housekeepingMakesTheMissingPartitionsAheadAndNotBeforeTheNextHour() {
        String lastDay = (String) db.query("SELECT 'events_p' || to_char((now() AT TIME ZONE 'UTC')::date + 7, 'YYYYMMDD')")
            .get(0).get(0);
        db.execute("DROP TABLE " + lastDay);
        RelayMaintenance maintenance = new RelayMaintenance(store(), 0, 60_000, true, new RelayMetrics(), STARTED,
            Runnable::run);
        maintenance.run(0);
        assertThat(partitionExists(lastDay)).isOne();

        db.execute("DROP TABLE " + lastDay);
        maintenance.run(RelayMaintenance.BACKLOG_INTERVAL_MS);
        assertThat(partitionExists(lastDay)).as("not before the hour").isZero();
        maintenance.run(RelayMaintenance.PARTITIONS_INTERVAL_MS);
        assertThat(partitionExists(lastDay)).isOne();
    }

    @Test
    void validateAcceptsThePartitionedTableAndItsClaimIndexIsOnEveryPartition() {
        Map<String, String> cfg = new HashMap<>(db.connectionProps());
        cfg.put("subscriptions", "part");
        cfg.put("outbox.retention.ms", Long.toString(THREE_DAYS_MS));
        List<String> errors = new OutboxSourceConnector().validate(cfg).configValues().stream()
            .flatMap(v -> v.errorMessages().stream().map(m -> v.name() + ": " + m)).toList();
        assertThat(errors).isEmpty();
        assertThat(db.queryLong("SELECT count(*) FROM pg_inherits i WHERE i.inhparent = 'events'::regclass AND NOT EXISTS"
            + " (SELECT 1 FROM pg_index x JOIN pg_inherits ii ON ii.inhrelid = x.indexrelid"
            + " WHERE x.indrelid = i.inhrelid AND ii.inhparent = 'events_unfanned_idx'::regclass)")).isZero();

        // negative control: a partitioned table without the claim's index is refused
        db.execute("CREATE TABLE events_unindexed (LIKE events INCLUDING DEFAULTS) PARTITION BY RANGE (occurred_at)");
        try {
            cfg.put("outbox.table", "events_unindexed");
            assertThat(new OutboxSourceConnector().validate(cfg).configValues().stream()
                .filter(v -> v.name().equals("outbox.table")).map(ConfigValue::errorMessages).flatMap(List::stream))
                .anyMatch(m -> m.contains("no partial index for the relay's claim"));
        } finally {
            db.execute("DROP TABLE events_unindexed");
        }
    }

    @Test
    void underTheRelaysSessionSettingsTheClaimAndStampReadAnIndexOfEveryPartitionAndNoHeapScan() throws SQLException {
        String claim = JdbcOutboxStore.claimSql("events", OutboxColumns.DEFAULT, false).sql();
        StringBuilder numbered = new StringBuilder();
        int n = 0;
        for (char ch : claim.toCharArray()) {
            numbered.append(ch == '?' ? "$" + ++n : String.valueOf(ch));
        }
        StringBuilder plan = new StringBuilder();
        // the simple protocol, so that the server reads $1... as the generic plan's parameters
        String url = db.jdbcUrl() + (db.jdbcUrl().contains("?") ? "&" : "?") + "preferQueryMode=simple";
        try (Connection c = DriverManager.getConnection(url, db.user(), db.password()); Statement st = c.createStatement()) {
            st.execute(NamedSql.load(JdbcOutboxStore.class, "outbox-relay.sql").get("SessionSetup"));
            try (ResultSet rs = st.executeQuery("EXPLAIN (GENERIC_PLAN, COSTS OFF) " + numbered)) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            }
        }
        long partitions = db.queryLong("SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass");
        assertThat(plan.toString()).doesNotContain("Seq Scan").contains("Merge Append");
        // the claim reads each partition's partial index in seq order, the share's bounds checked in it (V10: the
        // subject's hash is its second key); the stamp and the lease find rows by seq
        assertThat(plan.toString().split("Index Cond: \\(\\(\\(\\(hashtext\\(subject\\)\\)::bigint", -1))
            .hasSize((int) partitions + 1);
        assertThat(plan.toString().split("_pkey on ", -1).length - 1).isEqualTo(2 * (int) partitions);
    }

    /**
     * A relay session keeps the generic plan it made while the partitions were empty (a relay started before the
     * application wrote). A claim of 2,000 rows across three partitions must still read about what the rows take
     * (index probes, heap pages, the lease's new row versions: some 10,000 buffers). The control: the lease update
     * as it was, joined to the claimed rows besides naming their seqs, read some 560,000 (4 s against 0.4 s here).
     */
    @Test
    void aLargeClaimPlannedOnTinyPartitionsReadsAboutWhatItsRowsTake() throws SQLException {
        long shipped = largeClaimBuffers(UnaryOperator.identity());
        long joined = largeClaimBuffers(sql -> sql.replace("   WHERE e.seq = ANY(ARRAY(SELECT p.seq FROM p))",
            "    FROM p WHERE e.seq = p.seq AND e.seq = ANY(ARRAY(SELECT p.seq FROM p))"));
        assertThat(shipped).as("buffers a 2,000-row claim reads").isLessThan(LARGE_CLAIM * 15L);
        assertThat(joined).as("the control, the update joined to the claimed rows").isGreaterThan(LARGE_CLAIM * 100L);
    }

    private static final int LARGE_CLAIM = 2_000;

    /**
     * The stamp of a large claim reads each partition's primary key once, and nothing of it runs once per row, since
     * there is none: each row's fanout is found by a binary search over the sorted seqs. The control, the stamp joined
     * to its seqs again (and naming them, as it was), under the nested loop a relay session planned for it in
     * PartitionedOutboxEndToEndIT's drain (the join's other kinds turned off here, which the planner's estimates chose
     * there): one side of the join is read once per row of the other, 2,000 times (in that drain the key of every
     * partition, sorting the 2,000 seqs again each time: 20 s a stamp; the test ran 90-130 s, now under 40).
     */
    @Test
    void aLargeStampPlannedOnTinyPartitionsReadsEachPartitionsKeyOnce() throws SQLException {
        int stampSeqs = JdbcOutboxStore.claimSql("\"events\"", OutboxColumns.DEFAULT, false).names().indexOf("stamp_seqs") + 1;
        String nestedLoopOnly = "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off";
        assertThat(mostLoopsOfANodeInALargeStamp(nestedLoopOnly, UnaryOperator.identity())).isOne();
        int joined = mostLoopsOfANodeInALargeStamp(nestedLoopOnly, sql -> sql.replace(
            "   WHERE e.seq = ANY(?::bigint[]) AND e.fanned_out_at IS NULL",
            "    FROM unnest($" + stampSeqs + "::bigint[]) AS x(seq) WHERE e.seq = x.seq AND e.seq = ANY(?::bigint[])"
                + " AND e.fanned_out_at IS NULL"));
        assertThat(joined).as("the control, the stamp joined to its seqs").isGreaterThanOrEqualTo(LARGE_CLAIM);
    }

    /** The most loops of any node of a claim stamping LARGE_CLAIM rows (claiming none), planned on empty partitions. */
    private static int mostLoopsOfANodeInALargeStamp(String settings, UnaryOperator<String> edit) throws SQLException {
        TestDatabase fresh = TestPostgres.get().createEmptyDatabase("partitioned_stamp");
        fresh.runScript(TestPostgres.schemaFile("outbox.sql"), Map.of("partitioned", "daily"));
        String empty = ClaimStatement.args(Map.of("limit", "0"));
        try (Connection c = fresh.connect(); Statement st = c.createStatement()) {
            st.execute(NamedSql.load(JdbcOutboxStore.class, "outbox-relay.sql").get("SessionSetup"));
            st.execute(settings);
            ClaimStatement.prepare(st, "claim", edit);
            st.execute("EXECUTE claim(" + empty + ")"); // the plan is made now, on empty partitions
            fresh.execute("INSERT INTO events(type, subject, occurred_at) SELECT 't.a', 's-' || g,"
                + " now() - (g % 3) * interval '1 day' FROM generate_series(1, " + LARGE_CLAIM + ") g");
            String seqs = (String) fresh.query("SELECT array_agg(seq ORDER BY seq)::text FROM events").get(0).get(0);
            String stamp = ClaimStatement.args(Map.of("limit", "0", "stamp_seqs", "'" + seqs + "'",
                "stamp_fanouts", "array_fill('{}'::text, ARRAY[" + LARGE_CLAIM + "])"));
            String plan = ClaimStatement.explain(st, "(ANALYZE)", "claim", stamp);
            assertThat(fresh.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL")).as(plan)
                .isEqualTo(LARGE_CLAIM);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(" loops=(\\d+)\\)")
                .matcher(plan);
            int most = 0;
            while (m.find()) {
                most = Math.max(most, Integer.parseInt(m.group(1)));
            }
            return most;
        }
    }

    /** Shared buffers a claim of LARGE_CLAIM rows reads, its generic plan made while the partitions were empty. */
    private static long largeClaimBuffers(UnaryOperator<String> edit) throws SQLException {
        TestDatabase fresh = TestPostgres.get().createEmptyDatabase("partitioned_claim");
        fresh.runScript(TestPostgres.schemaFile("outbox.sql"), Map.of("partitioned", "daily"));
        String insert = "INSERT INTO events(type, subject, payload, occurred_at) SELECT 't.a', 's-' || (g % 50),"
            + " jsonb_build_object('n', g), now() - (g % 3) * interval '1 day' FROM generate_series(1, ";
        String args = ClaimStatement.args(Map.of("limit", Integer.toString(LARGE_CLAIM)));
        try (Connection c = fresh.connect(); Statement st = c.createStatement()) {
            st.execute(NamedSql.load(JdbcOutboxStore.class, "outbox-relay.sql").get("SessionSetup"));
            ClaimStatement.prepare(st, "claim", edit);
            st.execute("EXECUTE claim(" + args + ")"); // the plan is made now, on empty partitions
            fresh.execute(insert + LARGE_CLAIM + ") g");
            String plan = ClaimStatement.explain(st, "(ANALYZE, BUFFERS, FORMAT JSON)", "claim", args);
            java.util.regex.Matcher rows = java.util.regex.Pattern.compile("\"Actual Rows\": (\\d+)").matcher(plan);
            assertThat(rows.find() && Integer.parseInt(rows.group(1)) == LARGE_CLAIM).as("the statement's rows: %s", plan)
                .isTrue();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"Shared Hit Blocks\": (\\d+)").matcher(plan);
            assertThat(m.find()).as(plan).isTrue();
            return Long.parseLong(m.group(1)); // the top node's: the whole statement's
        }
    }

    @Test
    void theRelaysLeastPrivilegeRoleMakesPartitionsAheadAndDropsOnlyOnceGrantedTheDropFunction() {
        String role = db.name() + "_relay";
        db.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'relay-pw' IN ROLE outbox_relay");
        oldPartition("events_lp_old", 12);
        String lastDay = (String) db.query("SELECT 'events_p' || to_char((now() AT TIME ZONE 'UTC')::date + 7, 'YYYYMMDD')")
            .get(0).get(0);
        db.execute("DROP TABLE " + lastDay);
        try (HikariDataSource relayPool = new TestDatabase(db.name(), db.jdbcUrl(), role, "relay-pw").pool("lp", 1)) {
            OutboxStore relayStore = new JdbcOutboxStore(relayPool, "events", "\"events\"", "lp-0", "1", 1, 0, 60_000, "",
                null);
            RelayMetrics metrics = new RelayMetrics();
            new RelayMaintenance(relayStore, THREE_DAYS_MS, 60_000, true, metrics, STARTED, Runnable::run).run(0);
            assertThat(partitionExists(lastDay)).as("made ahead by the relay's role").isOne();
            assertThat(partitionExists("events_lp_old")).as("no EXECUTE on the drop function yet").isOne();
            assertThat(metrics.value("partitions-dropped-total")).isZero();

            db.execute("GRANT EXECUTE ON FUNCTION events_drop_partitions(timestamptz) TO outbox_relay");
            new RelayMaintenance(relayStore, THREE_DAYS_MS, 60_000, true, metrics, STARTED, Runnable::run).run(0);
            assertThat(partitionExists("events_lp_old")).isZero();
        } finally {
            db.execute("REVOKE EXECUTE ON FUNCTION events_drop_partitions(timestamptz) FROM outbox_relay; DROP ROLE " + role);
        }
    }

    @Test
    void theStoreClaimsStampsReleasesPoisonsAndRequeuesAcrossPartitions() throws SQLException {
        db.execute("UPDATE events SET fanned_out_at = now(), fanout = '{}' WHERE fanned_out_at IS NULL");
        // the default partition (a day without its own), today's, and one made ahead
        long a = db.queryLong("INSERT INTO events(type, subject, occurred_at) VALUES ('t.a', 'store-a', now() - interval '30 days')"
            + " RETURNING seq");
        long b = db.queryLong("INSERT INTO events(type, subject) VALUES ('t.a', 'store-b') RETURNING seq");
        long c = db.queryLong("INSERT INTO events(type, subject, occurred_at) VALUES ('t.a', 'store-c', now() + interval '2 days')"
            + " RETURNING seq");
        assertThat(db.queryLong("SELECT count(DISTINCT tableoid) FROM events WHERE seq IN (?, ?, ?)", a, b, c)).isEqualTo(3);
        OutboxStore store = store();

        List<ClaimedRow> claimed = store.claim(10).rows();
        assertThat(claimed).extracting(ClaimedRow::seq).containsExactly(a, b, c);
        assertThat(store.stamp(List.of(new OutboxStore.Stamp(a, "{}", claimed.get(0).id())))).isOne();
        store.release(List.of(new OutboxStore.Release(b, true, 0, null)));
        assertThat(store.poison(List.of(new OutboxStore.Poison(c, "boom", claimed.get(2).attempts())))).hasSize(1);
        assertThat(db.query("SELECT seq, fanned_out_at IS NOT NULL, poisoned_at IS NOT NULL, lease_owner IS NULL, attempts"
            + " FROM events WHERE seq IN (?, ?, ?) ORDER BY seq", a, b, c)).containsExactly(
                List.of(a, true, false, true, 1), List.of(b, false, false, true, 0), List.of(c, false, true, true, 1));

        assertThat(store.claim(10).rows()).extracting(ClaimedRow::seq).as("the poisoned row is left out").containsExactly(b);
        assertThat(db.queryLong("SELECT count(*) FROM (SELECT events_requeue(?) AS r) q WHERE r", c)).isOne();
        List<ClaimedRow> requeued = store.claim(10).rows();
        assertThat(requeued).extracting(ClaimedRow::seq).containsExactly(c);
        assertThat(store.stamp(List.of(new OutboxStore.Stamp(b, "{}", "b"), new OutboxStore.Stamp(c, "{}", "c")))).isEqualTo(2);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL")).isZero();
    }
}
