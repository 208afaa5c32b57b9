package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.DirectoryResourceAccessor;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The versioned migrations under schemas/migrations/ make what schemas/sql/outbox.sql makes, through the
 * real Flyway and Liquibase, with other names too; and a database made by the release (V1) upgrades with
 * V2 to V11 as docs/upgrading.md says; and partitioned by day (V5, docs/partitioned-outbox.md) the same three ways.
 */
class SchemaMigrationsIT {
    private static final Path OUTBOX_SQL = TestPostgres.schemaFile("outbox.sql");
    private static final Path MIGRATIONS = OUTBOX_SQL.getParent().getParent().resolve("migrations");
    private static final Path FLYWAY = MIGRATIONS.resolve("flyway");
    private static final List<String> VERSIONS = List.of("V1__outbox.sql", "V2__outbox_wakeup.sql",
        "V3__outbox_operator_sql.sql", "V4__outbox_wakeup_clears.sql", "V5__outbox_partitioned.sql",
        "V6__outbox_replay.sql", "V7__outbox_subject_order.sql", "V8__outbox_wakeup_when.sql",
        "V9__outbox_wakeup_count_grant.sql", "V10__outbox_claim_share_index.sql", "V11__outbox_requeue_wakes.sql");
    private static final Map<String, String> NAMES = Map.of("table", "app.events", "channel", "app_outbox");
    private static final String SET_NAMES = "SET outbox_relay.outbox_table = 'app.events';"
        + " SET outbox_relay.notify_channel = 'app_outbox'";

    /** What a migration runs: the file from its first statement on (its header comment is its own). */
    private static String body(String version) throws IOException {
        String text = Files.readString(FLYWAY.resolve(version));
        return text.substring(text.indexOf("DO $outbox$"));
    }

    @Test
    void outboxSqlRunsTheMigrationsToTheLetterInOrder() throws IOException {
        String outbox = Files.readString(OUTBOX_SQL);
        int previous = -1;
        for (String version : VERSIONS) {
            int at = outbox.indexOf(body(version));
            assertThat(at).as("%s in outbox.sql", version).isGreaterThan(previous);
            previous = at;
        }
    }

    private static List<String> madeByOutboxSql(String schema, Map<String, String> names) {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_reference");
        db.runScript(OUTBOX_SQL, names);
        return SchemaCatalog.of(db, schema);
    }

    @Test
    void flywayMakesWhatOutboxSqlMakes() {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_flyway");
        Flyway.configure().dataSource(db.jdbcUrl(), db.user(), db.password())
            .locations("filesystem:" + FLYWAY).initSql(SET_NAMES).load().migrate();

        assertThat(SchemaCatalog.of(db, "app")).isNotEmpty().isEqualTo(madeByOutboxSql("app", NAMES));
        // and with no names given: the defaults
        TestDatabase defaults = TestPostgres.get().createEmptyDatabase("migrations_flyway_defaults");
        Flyway.configure().dataSource(defaults.jdbcUrl(), defaults.user(), defaults.password())
            .locations("filesystem:" + FLYWAY).load().migrate();
        assertThat(SchemaCatalog.of(defaults, "public")).filteredOn(l -> !l.contains("flyway_schema_history"))
            .isEqualTo(madeByOutboxSql("public", Map.of()));
    }

    @Test
    void aDatabaseOfTheReleaseUpgradesWithFlywayFromBaselineOne() throws IOException {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_upgrade");
        db.execute(SET_NAMES + ";\n" + body("V1__outbox.sql")); // as outbox.sql of release 0.1.0 left it
        db.execute("INSERT INTO app.events(type, subject) VALUES ('order.created', 'kept')");

        // docs/upgrading.md: flyway baseline -baselineVersion=1 once, then flyway migrate
        Flyway flyway = Flyway.configure().dataSource(db.jdbcUrl(), db.user(), db.password())
            .locations("filesystem:" + FLYWAY).initSql(SET_NAMES).baselineVersion("1").load();
        flyway.baseline();
        flyway.migrate();

        assertThat(db.query("SELECT version, type FROM flyway_schema_history ORDER BY installed_rank"))
            .containsExactly(List.of("1", "BASELINE"), List.of("2", "SQL"), List.of("3", "SQL"),
                List.of("4", "SQL"), List.of("5", "SQL"), List.of("6", "SQL"), List.of("7", "SQL"),
                List.of("8", "SQL"), List.of("9", "SQL"), List.of("10", "SQL"), List.of("11", "SQL"));
        assertThat(SchemaCatalog.of(db, "app")).isEqualTo(madeByOutboxSql("app", NAMES));
        assertThat(db.queryLong("SELECT count(*) FROM app.events WHERE subject = 'kept'")).isOne();
    }

    private static void liquibaseUpdate(TestDatabase db) throws Exception {
        liquibaseUpdate(db, "no");
    }

    private static void liquibaseUpdate(TestDatabase db, String partitioned) throws Exception {
        try (Connection c = db.connect()) {
            Database database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            Liquibase liquibase = new Liquibase("liquibase/outbox-changelog.xml",
                new DirectoryResourceAccessor(MIGRATIONS), database);
            liquibase.setChangeLogParameter("outbox_table", "app.events");
            liquibase.setChangeLogParameter("outbox_channel", "app_outbox");
            liquibase.setChangeLogParameter("outbox_partitioned", partitioned);
            liquibase.update("");
        }
    }

    @Test
    void liquibaseMakesWhatOutboxSqlMakes() throws Exception {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_liquibase");
        liquibaseUpdate(db);

        assertThat(SchemaCatalog.of(db, "app")).isNotEmpty().isEqualTo(madeByOutboxSql("app", NAMES));
    }

    @Test
    void aDatabaseOfTheReleaseUpgradesWithLiquibaseAsItIs() throws Exception {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_liquibase_upgrade");
        db.execute(SET_NAMES + ";\n" + body("V1__outbox.sql"));
        db.execute("INSERT INTO app.events(type, subject) VALUES ('order.created', 'kept')");

        liquibaseUpdate(db);

        assertThat(SchemaCatalog.of(db, "app")).isEqualTo(madeByOutboxSql("app", NAMES));
        assertThat(db.queryLong("SELECT count(*) FROM app.events WHERE subject = 'kept'")).isOne();
    }

    @Test
    void withoutPartitionedOutboxSqlMakesWhatTheOtherMigrationsMake() throws IOException {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_all_but_v5");
        migrateAllBut(db, "V5__");
        assertThat(SchemaCatalog.of(db, "app")).isEqualTo(madeByOutboxSql("app", NAMES));
    }

    @Test
    void partitionedDailyIsTheSameThroughOutboxSqlFlywayAndLiquibase() throws Exception {
        TestDatabase psql = TestPostgres.get().createEmptyDatabase("migrations_partitioned_psql");
        psql.runScript(OUTBOX_SQL, Map.of("table", "app.events", "channel", "app_outbox", "partitioned", "daily"));
        List<String> reference = SchemaCatalog.of(psql, "app");
        assertThat(psql.queryLong("SELECT count(*) FROM pg_class WHERE oid = 'app.events'::regclass AND relkind = 'p'"))
            .isOne();
        // today and the 7 days after it, and the default partition
        assertThat(psql.queryLong("SELECT count(*) FROM pg_inherits WHERE inhparent = 'app.events'::regclass"))
            .isEqualTo(9);
        assertThat(reference).isNotEqualTo(madeByOutboxSql("app", NAMES))
            .anyMatch(l -> l.startsWith("relation events_default "));

        TestDatabase flyway = TestPostgres.get().createEmptyDatabase("migrations_partitioned_flyway");
        Flyway.configure().dataSource(flyway.jdbcUrl(), flyway.user(), flyway.password())
            .locations("filesystem:" + FLYWAY).initSql(SET_NAMES + "; SET outbox_relay.partitioned = 'daily'").load()
            .migrate();
        assertThat(SchemaCatalog.of(flyway, "app")).isEqualTo(reference);

        TestDatabase liquibase = TestPostgres.get().createEmptyDatabase("migrations_partitioned_liquibase");
        liquibaseUpdate(liquibase, "daily");
        assertThat(SchemaCatalog.of(liquibase, "app")).isEqualTo(reference);
    }

    @Test
    void partitionedRefusesAPlainTableWithRowsAndKeepsThem() throws IOException {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_partitioned_refused");
        db.runScript(OUTBOX_SQL, NAMES);
        db.execute("INSERT INTO app.events(type, subject) VALUES ('order.created', 'kept')");

        assertThatThrownBy(() -> db.runScript(OUTBOX_SQL, Map.of("table", "app.events", "channel", "app_outbox",
            "partitioned", "daily"))).hasMessageContaining("holds rows, so it cannot be rebuilt partitioned");

        assertThat(db.queryLong("SELECT count(*) FROM app.events WHERE subject = 'kept'")).isOne();
        // outbox.sql runs in one transaction: the blocks before V5 are rolled back with it. Before, they committed one
        // by one, and the failed run left the trigger V1's (no WHEN: the function on every insert) and the requeues
        // V1's and V3's (waking by NOTIFY alone) until outbox.sql ran to its end again.
        assertThat(SchemaCatalog.of(db, "app")).isEqualTo(madeByOutboxSql("app", NAMES));
        db.runScript(OUTBOX_SQL, NAMES);
        assertThat(SchemaCatalog.of(db, "app")).isEqualTo(madeByOutboxSql("app", NAMES));
        assertThat(db.queryLong("SELECT count(*) FROM app.events WHERE subject = 'kept'")).isOne();
    }

    @Test
    void aPlainTableWithRowsBecomesThePartitionedTablesFirstPartitionKeepingEveryRow() {
        for (boolean claimIndexBeforeV10 : new boolean[] {false, true}) {
            TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_partition_existing"
                + (claimIndexBeforeV10 ? "_pre_v10" : ""));
            db.runScript(OUTBOX_SQL, NAMES);
            if (claimIndexBeforeV10) {
                db.execute("DROP INDEX app.events_unfanned_idx; CREATE INDEX events_unfanned_idx ON app.events (seq)"
                    + " WHERE fanned_out_at IS NULL AND poisoned_at IS NULL");
            }
            db.execute("INSERT INTO app.events(type, subject, occurred_at, fanned_out_at) SELECT 't.a', 's' || g,"
                + " now() - (g % 4) * interval '1 day', CASE WHEN g % 2 = 0 THEN now() END FROM generate_series(1, 100) g");
            List<List<Object>> before = db.query("SELECT seq, id::text, fanned_out_at IS NULL FROM app.events ORDER BY seq");

            db.runScript(TestPostgres.schemaFile("outbox-partition-existing.sql"), NAMES);

            assertThat(db.queryLong("SELECT count(*) FROM pg_class WHERE oid = 'app.events'::regclass AND relkind = 'p'"))
                .isOne();
            assertThat(db.query("SELECT seq, id::text, fanned_out_at IS NULL FROM app.events ORDER BY seq")).isEqualTo(before);
            assertThat(db.queryLong("SELECT count(*) FROM app.events_legacy")).isEqualTo(100);
            // seq goes on after the old rows, and an old id is still taken
            assertThat(db.queryLong("INSERT INTO app.events(type, subject) VALUES ('t.a', 'new') RETURNING seq"))
                .isEqualTo(101);
            assertThatThrownBy(() -> db.execute("INSERT INTO app.events(id, type, subject, occurred_at) VALUES ('"
                + before.get(0).get(1) + "', 't.a', 'dup', now() + interval '3 days')")).rootCause()
                .hasMessageContaining("events_id_key");
            // the claim's index on every partition, the old table's among them
            assertThat(db.queryLong("SELECT count(*) FROM pg_inherits i WHERE i.inhparent = 'app.events'::regclass AND NOT EXISTS"
                + " (SELECT 1 FROM pg_index x JOIN pg_inherits ii ON ii.inhrelid = x.indexrelid"
                + " WHERE x.indrelid = i.inhrelid AND ii.inhparent = 'app.events_unfanned_idx'::regclass)")).isZero();
            // and on the old table only that one: one from before V10 does not stay beside it for every stamp to update
            assertThat(db.query("SELECT x.indnkeyatts FROM pg_index x WHERE x.indrelid = 'app.events_legacy'::regclass"
                + " AND pg_get_expr(x.indpred, x.indrelid) LIKE '%fanned_out_at IS NULL%' AND x.indkey[0] ="
                + " (SELECT attnum FROM pg_attribute WHERE attrelid = x.indrelid AND attname = 'seq')"))
                .as("claim index before V10: %s", claimIndexBeforeV10).containsExactly(List.of(2));
        }
    }

    /**
     * V10 on a large live table: the operator built the new index CONCURRENTLY first, and the migration takes it
     * (not a second build) and gives it the claim index's name; one that is invalid (a build that failed) it refuses.
     */
    @Test
    void migrationV10TakesAnIndexBuiltConcurrentlyBeforeAndRefusesAnInvalidOne() throws IOException {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_v10_concurrently");
        migrateAllBut(db, "V10__");
        String build = "CREATE INDEX CONCURRENTLY events_unfanned_v10_idx ON app.events"
            + " (seq, (hashtext(subject::text)::bigint + 2147483648)) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL";
        db.execute(build);
        db.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'app.events_unfanned_v10_idx'::regclass");
        assertThatThrownBy(() -> db.execute(SET_NAMES + ";\n" + body("V10__outbox_claim_share_index.sql")))
            .rootCause().hasMessageContaining("events_unfanned_v10_idx is invalid");
        assertThat(db.queryLong("SELECT indnkeyatts FROM pg_index WHERE indexrelid = 'app.events_unfanned_idx'::regclass"))
            .as("the claim's index of before, kept").isOne();

        db.execute("UPDATE pg_index SET indisvalid = true WHERE indexrelid = 'app.events_unfanned_v10_idx'::regclass");
        long built = db.queryLong("SELECT 'app.events_unfanned_v10_idx'::regclass::oid::bigint");
        db.execute(SET_NAMES + ";\n" + body("V10__outbox_claim_share_index.sql"));
        assertThat(db.queryLong("SELECT 'app.events_unfanned_idx'::regclass::oid::bigint")).isEqualTo(built);
        assertThat(SchemaCatalog.of(db, "app")).isEqualTo(madeByOutboxSql("app", NAMES));
    }

    /**
     * V11: a requeue, single or in bulk, wakes the relay as an insert does: the flag a waiting task armed goes down
     * and the clear is counted, so that task claims at its next look even when the NOTIFY never reaches it (a LISTEN
     * session dead unseen); the NOTIFY still goes, on the table's channel. The negative control is the requeue of
     * before V11 on the same database: a NOTIFY alone, the flag left up and the count where it was, so a task that
     * missed the NOTIFY left the requeued rows to its sweep.
     */
    @Test
    void fromV11ARequeueTakesTheFlagDownAndCountsTheClear() throws Exception {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_v11_requeue");
        migrateAllBut(db, "V11__");
        try (Connection listener = db.connect()) {
            listener.createStatement().execute("LISTEN app_outbox");
            PGConnection pg = listener.unwrap(PGConnection.class);
            List<PGNotification> received = new ArrayList<>();
            String poison = "INSERT INTO app.events(type, subject, poisoned_at, last_error) VALUES ('order.paid', ?,"
                + " now(), 'boom') RETURNING seq";

            // the rows are poisoned before a task arms: an insert while it waits takes the flag down itself
            long single = db.queryLong(poison, "single-before");
            db.queryLong(poison, "bulk-before");
            long before = armed(db);
            assertThat(db.query("SELECT app.events_requeue(?)", single)).containsExactly(List.of(true));
            assertThat(db.query("SELECT * FROM app.events_requeue_matching('order.%')")).hasSize(1);
            awaitNotifications(pg, received, 2); // before V11: woken by NOTIFY
            assertThat(flagAndCount(db)).as("before V11: the flag left up, nothing counted")
                .containsExactly(1L, before);

            db.execute(SET_NAMES + ";\n" + body("V11__outbox_requeue_wakes.sql"));
            busy(db);
            single = db.queryLong(poison, "single-after");
            db.queryLong(poison, "bulk-after");
            long armed = armed(db);
            assertThat(db.query("SELECT app.events_requeue(?)", single)).containsExactly(List.of(true));
            assertThat(flagAndCount(db)).containsExactly(0L, armed + 1);
            awaitNotifications(pg, received, 3); // and the NOTIFY goes as before

            armed = armed(db);
            assertThat(db.query("SELECT * FROM app.events_requeue_matching('order.%')")).hasSize(1);
            assertThat(flagAndCount(db)).containsExactly(0L, armed + 1);
            awaitNotifications(pg, received, 4);

            armed = armed(db);
            assertThat(db.query("SELECT * FROM app.events_requeue_matching('order.%')")).as("nothing to requeue")
                .isEmpty();
            assertThat(db.query("SELECT app.events_requeue(?)", single)).containsExactly(List.of(false));
            assertThat(flagAndCount(db)).as("wakes nobody").containsExactly(1L, armed);
        }
        assertThat(SchemaCatalog.of(db, "app")).isEqualTo(madeByOutboxSql("app", NAMES));
    }

    /** V11 refuses a table without the column its bulk requeue matches types in, naming the setting to set. */
    @Test
    void migrationV11RefusesATableWithoutTheTypeColumnItIsTold() throws IOException {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_v11_column");
        migrateAllBut(db, "V11__");
        assertThatThrownBy(() -> db.execute(SET_NAMES + "; SET outbox_relay.column_type = 'event_type';\n"
            + body("V11__outbox_requeue_wakes.sql"))).rootCause().hasMessageContaining("has no column event_type")
            .hasMessageContaining("outbox_relay.column_type");
    }

    /**
     * The wake runs as the function's owner: an operator who may update the outbox and nothing else requeues and the
     * clear is counted. Where EXECUTE on the wake is taken from PUBLIC (a hardened database), the requeue still
     * succeeds and NOTIFYs alone, as before V11, instead of failing.
     */
    @Test
    void anOperatorWithoutGrantsOnTheSequencesRequeuesAndWithoutTheWakeStillNotifies() throws Exception {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_v11_operator");
        for (String version : VERSIONS) {
            db.execute(SET_NAMES + ";\n" + body(version));
        }
        String operator = "requeuer_" + System.nanoTime();
        db.execute("CREATE ROLE " + operator + "; GRANT USAGE ON SCHEMA app TO " + operator
            + "; GRANT SELECT, UPDATE ON app.events TO " + operator);
        String poison = "INSERT INTO app.events(type, subject, poisoned_at, last_error) VALUES ('order.paid', ?,"
            + " now(), 'boom') RETURNING seq";
        try (Connection listener = db.connect(); Connection asOperator = db.connect()) {
            listener.createStatement().execute("LISTEN app_outbox");
            PGConnection pg = listener.unwrap(PGConnection.class);
            List<PGNotification> received = new ArrayList<>();
            asOperator.createStatement().execute("SET ROLE " + operator);

            long poisoned = db.queryLong(poison, "granted");
            long armed = armed(db);
            assertThat(requeue(asOperator, poisoned)).isTrue();
            assertThat(flagAndCount(db)).as("counted, as the owner").containsExactly(0L, armed + 1);
            awaitNotifications(pg, received, 1);

            db.execute("REVOKE EXECUTE ON FUNCTION app.events_wake_relay() FROM PUBLIC");
            busy(db);
            poisoned = db.queryLong(poison, "revoked");
            armed = armed(db);
            assertThat(requeue(asOperator, poisoned)).as("the requeue is not refused").isTrue();
            assertThat(flagAndCount(db)).as("a NOTIFY alone").containsExactly(1L, armed);
            awaitNotifications(pg, received, 2);
            busy(db);
            db.queryLong(poison, "revoked-bulk");
            armed = armed(db);
            try (var bulk = asOperator.createStatement().executeQuery(
                "SELECT count(*) FROM app.events_requeue_matching('order.%')")) {
                bulk.next();
                assertThat(bulk.getLong(1)).as("nor the bulk one").isOne();
            }
            assertThat(flagAndCount(db)).containsExactly(1L, armed);
            awaitNotifications(pg, received, 3);

            db.execute("DROP FUNCTION app.events_wake_relay()"); // nothing stops it: no dependency is recorded
            busy(db);
            poisoned = db.queryLong(poison, "dropped");
            assertThat(requeue(asOperator, poisoned)).as("without the wake, as before V11").isTrue();
            awaitNotifications(pg, received, 4);
        } finally {
            db.execute("DROP OWNED BY " + operator + "; DROP ROLE " + operator);
        }
    }

    private static boolean requeue(Connection as, long seq) throws Exception {
        try (var ps = as.prepareStatement("SELECT app.events_requeue(?)")) {
            ps.setLong(1, seq);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * Without outbox_relay.column_type, V11 keeps the type column the bulk requeue matched (an adopted table's, made
     * by V3 with the setting), not outbox.sql's: here the table also has a column named type, which holds something
     * else, so a bulk requeue pointed at it would match nothing.
     */
    @Test
    void migrationV11KeepsTheTypeColumnTheBulkRequeueMatched() throws Exception {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_v11_kept_column");
        migrateAllBut(db, "V11__");
        db.execute("ALTER TABLE app.events RENAME COLUMN type TO \"Event Kind\"");
        db.execute("ALTER TABLE app.events ADD COLUMN type text NOT NULL DEFAULT 'decoy'");
        db.execute(SET_NAMES + "; SET outbox_relay.column_type = 'Event Kind';\n" + body("V3__outbox_operator_sql.sql"));

        db.execute(SET_NAMES + ";\n" + body("V11__outbox_requeue_wakes.sql"));
        long poisoned = db.queryLong("INSERT INTO app.events(\"Event Kind\", subject, poisoned_at, last_error)"
            + " VALUES ('order.paid', 'kept-column', now(), 'boom') RETURNING seq");
        assertThat(db.query("SELECT * FROM app.events_requeue_matching('order.%')")).containsExactly(List.of(poisoned));
    }

    /**
     * The wake runs as its owner, so V11 refuses to make it as a role that may not update the flag and the count: every
     * requeue would fail. (The owner passes: every other test here migrates as it.)
     */
    @Test
    void migrationV11RefusesARoleThatMayNotUpdateTheSequencesItsWakeUses() throws IOException {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("migrations_v11_role");
        migrateAllBut(db, "V11__");
        String migrator = "migrator_" + System.nanoTime();
        db.execute("CREATE ROLE " + migrator + "; GRANT USAGE, CREATE ON SCHEMA app TO " + migrator);
        try {
            assertThatThrownBy(() -> db.execute("SET ROLE " + migrator + "; " + SET_NAMES + ";\n"
                + body("V11__outbox_requeue_wakes.sql"))).rootCause().hasMessageContaining("may not update")
                .hasMessageContaining("app.events_wakeup").hasMessageContaining("owner of the sequences");
            assertThat(db.queryLong("SELECT count(*) FROM pg_proc WHERE proname = 'events_wake_relay'")).isZero();
        } finally {
            db.execute("DROP OWNED BY " + migrator + "; DROP ROLE " + migrator);
        }
    }

    /** Every migration in order but the one whose file name starts with {@code skipped}, by hand. */
    private static void migrateAllBut(TestDatabase db, String skipped) throws IOException {
        for (String version : VERSIONS.stream().filter(v -> !v.startsWith(skipped)).toList()) {
            db.execute(SET_NAMES + ";\n" + body(version));
        }
    }

    /** Every relay task busy: the flag down, so that an insert wakes nobody. */
    private static void busy(TestDatabase db) {
        db.execute("SELECT setval('app.events_wakeup', 0, true)");
    }

    /** A relay task arms the flag as it waits; the count of clears as it does. */
    private static long armed(TestDatabase db) {
        db.execute("SELECT setval('app.events_wakeup', 1, true)");
        return flagAndCount(db).get(1);
    }

    private static List<Long> flagAndCount(TestDatabase db) {
        return List.of(db.queryLong("SELECT last_value FROM app.events_wakeup"),
            db.queryLong("SELECT COALESCE(pg_sequence_last_value('app.events_wakeup_clears'), 0)"));
    }

    private static void awaitNotifications(PGConnection pg, List<PGNotification> received, int total) {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            PGNotification[] got = pg.getNotifications(100);
            received.addAll(got == null ? List.of() : List.of(got));
            return received.size() >= total;
        });
        assertThat(received).hasSize(total).allMatch(n -> n.getName().equals("app_outbox"));
    }
}
