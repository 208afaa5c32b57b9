package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.outboxrelay.testsupport.SqlScript;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * schemas/sql/outbox.sql takes the table and the NOTIFY channel as psql variables: every object it makes
 * follows them, real psql makes exactly what the tests' PsqlScript makes, and a relay configured with the
 * same names is woken by that channel, both by inserts and by the requeue functions.
 */
class SchemaTakesNamesIT {
    private static final String CONNECTOR = "schema-takes-names";
    private static final Map<String, String> NAMES = Map.of("table", "app.events", "channel", "app_outbox");
    private static final Path OUTBOX_SQL = TestPostgres.schemaFile("outbox.sql");

    @Test
    void everyObjectFollowsTheTableAndChannelItIsGiven() {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("schema_names");
        db.runScript(OUTBOX_SQL, NAMES);

        for (String relation : List.of("app.events", "app.events_wakeup", "app.events_pending", "app.events_poisoned",
            "app.events_unfanned_idx", "app.events_poisoned_idx", "app.events_replays", "app.events_replays_open_idx",
            "app.events_occurred_at_brin")) {
            assertThat(db.queryLong("SELECT count(*) FROM pg_class WHERE oid = to_regclass(?)", relation))
                .as(relation).isOne();
        }
        assertThat(db.queryLong("SELECT count(*) FROM pg_class WHERE relname LIKE 'events%'"
            + " AND relnamespace <> 'app'::regnamespace")).as("nothing outside the schema").isZero();
        assertThat(db.query("SELECT seqtypid::regtype::text, seqmin, seqmax, seqstart FROM pg_sequence"
            + " WHERE seqrelid = 'app.events_wakeup'::regclass")).containsExactly(List.of("smallint", 0L, 1L, 0L));
        assertThat(db.query("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'app.events'::regclass"
            + " AND NOT tgisinternal")).singleElement().asString()
            .contains("AFTER INSERT ON app.events FOR EACH STATEMENT"
                + " WHEN ((pg_sequence_last_value('app.events_wakeup'::regclass) IS DISTINCT FROM 0))"
                + " EXECUTE FUNCTION app.events_notify('app_outbox')");
        assertThat(db.query("SELECT to_regprocedure('app.events_requeue(bigint)') IS NOT NULL,"
            + " to_regprocedure('app.events_requeue_matching(text, timestamptz, timestamptz)') IS NOT NULL"))
            .containsExactly(List.of(true, true));
        assertThat(db.query("SELECT pg_get_indexdef('app.events_unfanned_idx'::regclass)")).singleElement().asString()
            .contains("ON app.events USING btree (seq, (((hashtext(subject))::bigint + '2147483648'::bigint)))"
                + " WHERE ((fanned_out_at IS NULL) AND (poisoned_at IS NULL))");
        assertThat(db.query("SELECT has_schema_privilege('outbox_relay', 'app', 'USAGE'),"
            + " has_table_privilege('outbox_relay', 'app.events', 'SELECT, UPDATE'),"
            + " has_sequence_privilege('outbox_relay', 'app.events_wakeup', 'SELECT, UPDATE'),"
            + " (SELECT reloptions::text FROM pg_class WHERE oid = 'app.events'::regclass) LIKE '%fillfactor=50%'"))
            .containsExactly(List.of(true, true, true, true));
    }

    /** {@code app.o'ut"box} as SQL must write it. */
    private static final String QUOTED_TABLE = "app.\"o'ut\"\"box\"";

    /** A database where outbox.sql made the table {@code app.o'ut"box}. */
    private static TestDatabase withTableNeedingQuotes(String name) {
        TestDatabase db = TestPostgres.get().createEmptyDatabase(name);
        db.runScript(OUTBOX_SQL, Map.of("table", "app.o'ut\"box", "channel", "app_outbox"));
        return db;
    }

    /**
     * Migration V6 takes any table name: the replay functions quote it wherever it appears, their error messages
     * included (a name with a quote in it must not break the function's body).
     */
    @Test
    void theReplayFunctionsWorkForATableWhoseNameNeedsQuoting() {
        TestDatabase db = withTableNeedingQuotes("schema_names_replay");
        String table = QUOTED_TABLE;
        String replay = "app.\"o'ut\"\"box_replay\"";
        db.execute("INSERT INTO " + table + "(type, subject, fanned_out_at, fanout)"
            + " VALUES ('order.created', 'o-1', now(), '{}'), ('order.paid', 'o-1', now(), '{}')");

        long request = db.queryLong("SELECT " + replay + "('search', now() - interval '1 hour', now())");
        assertThat(db.query("SELECT subscription, through_seq, progress_seq FROM app.\"o'ut\"\"box_replays\""
            + " WHERE id = ?", request)).containsExactly(List.of("search", 2L, 0L));
        assertThatThrownBy(() -> db.queryLong("SELECT " + replay + "('', now(), now())"))
            .hasStackTraceContaining("box_replay\": the subscription is empty");
        assertThat(db.queryLong("SELECT count(*) FROM app.\"o'ut\"\"box_replays\" WHERE "
            + "app.\"o'ut\"\"box_replay_cancel\"(id)")).isOne();
    }

    /**
     * Migration V11 quotes the name too: on such a table both requeues put the row back and wake the relay through
     * the table's wake function (the flag down, the clear counted), whose name they look up as text.
     */
    @Test
    void theRequeuesWakeTheRelayForATableWhoseNameNeedsQuoting() {
        TestDatabase db = withTableNeedingQuotes("schema_names_requeue");
        String table = QUOTED_TABLE;
        String flag = "app.\"o'ut\"\"box_wakeup\"";
        String count = "SELECT COALESCE(pg_sequence_last_value('app.\"o''ut\"\"box_wakeup_clears\"'), 0)";
        long single = db.queryLong("INSERT INTO " + table + "(type, subject, poisoned_at, last_error)"
            + " VALUES ('order.paid', 'o-1', now(), 'boom') RETURNING seq");
        long bulk = db.queryLong("INSERT INTO " + table + "(type, subject, poisoned_at, last_error)"
            + " VALUES ('order.paid', 'o-2', now(), 'boom') RETURNING seq");

        long before = db.queryLong(count);
        db.execute("SELECT setval('" + flag.replace("'", "''") + "', 1, true)");
        assertThat(db.query("SELECT app.\"o'ut\"\"box_requeue\"(?)", single)).containsExactly(List.of(true));
        assertThat(db.queryLong("SELECT last_value FROM " + flag)).isZero();
        assertThat(db.query("SELECT * FROM app.\"o'ut\"\"box_requeue_matching\"('order.%')"))
            .containsExactly(List.of(bulk));
        assertThat(db.queryLong(count)).as("both counted").isEqualTo(before + 2);
    }

    @Test
    void runningItAgainChangesNothing() {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("schema_rerun");
        db.runScript(OUTBOX_SQL, NAMES);
        List<String> once = SchemaCatalog.of(db, "app");
        db.runScript(OUTBOX_SQL, NAMES);

        assertThat(SchemaCatalog.of(db, "app")).isNotEmpty().isEqualTo(once);
    }

    /** The tests apply the file through PsqlScript; psql itself must make the very same objects. */
    @Test
    void realPsqlMakesWhatTheTestsMake() {
        assumeTrue(SqlScript.psqlAvailable(), "no psql on the PATH");
        TestDatabase viaHelper = TestPostgres.get().createEmptyDatabase("schema_helper");
        TestDatabase viaPsql = TestPostgres.get().createEmptyDatabase("schema_psql");
        viaHelper.runScript(OUTBOX_SQL, NAMES);
        SqlScript.psql(viaPsql, OUTBOX_SQL, NAMES);
        assertThat(SchemaCatalog.of(viaPsql, "app")).isNotEmpty().isEqualTo(SchemaCatalog.of(viaHelper, "app"));

        // and without variables: the defaults, events and outbox_events in public
        TestDatabase defaultsHelper = TestPostgres.get().createEmptyDatabase("schema_defaults_helper");
        TestDatabase defaultsPsql = TestPostgres.get().createEmptyDatabase("schema_defaults_psql");
        defaultsHelper.runScript(OUTBOX_SQL);
        SqlScript.psql(defaultsPsql, OUTBOX_SQL, Map.of());
        List<String> defaults = SchemaCatalog.of(defaultsPsql, "public");
        assertThat(defaults).isEqualTo(SchemaCatalog.of(defaultsHelper, "public"))
            .anyMatch(l -> l.contains("EXECUTE FUNCTION events_notify('outbox_events')"));
    }

    @Test
    void aRelayOnTheNamedTableIsWokenByItsChannelForInsertsAndRequeues() {
        TestDatabase db = TestPostgres.get().createEmptyDatabase("schema_relay");
        db.runScript(OUTBOX_SQL, NAMES);
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", "schema-names-orders");
        cfg.put("outbox.table", "app.events");
        cfg.put("outbox.notify.channel", "app_outbox");
        // ten minutes: within the test only a NOTIFY on app_outbox can make the relay claim
        cfg.put("outbox.sweep.interval.ms", "600000");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
        try {
            awaitArmed(db);

            db.execute("INSERT INTO app.events(type, subject) VALUES ('order.created', 'inserted')");
            awaitFanned(db, "inserted");

            long one = insertPoisoned(db, "requeued-one");
            long bulk = insertPoisoned(db, "requeued-bulk");
            awaitArmed(db);
            assertThat(db.query("SELECT app.events_requeue(?)", one)).containsExactly(List.of(true));
            awaitFanned(db, "requeued-one");
            awaitArmed(db);
            assertThat(db.query("SELECT * FROM app.events_requeue_matching('order.%', NULL, NULL)"))
                .containsExactly(List.of(bulk));
            awaitFanned(db, "requeued-bulk");

            assertThat(TestConnect.consume(3, Duration.ofSeconds(20), "schema-names-orders"))
                .extracting(r -> r.value().get("subject").asText())
                .containsExactlyInAnyOrder("inserted", "requeued-one", "requeued-bulk");
        } finally {
            TestConnect.cluster().deleteConnector(CONNECTOR);
        }
    }

    private static long insertPoisoned(TestDatabase db, String subject) {
        return db.queryLong("INSERT INTO app.events(type, subject, attempts, poisoned_at, last_error)"
            + " VALUES ('order.created', ?, 5, now(), 'broken downstream') RETURNING seq", subject);
    }

    private static void awaitArmed(TestDatabase db) {
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT last_value FROM app.events_wakeup") == 1);
    }

    private static void awaitFanned(TestDatabase db, String subject) {
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong(
            "SELECT count(*) FROM app.events WHERE subject = ? AND fanned_out_at IS NOT NULL", subject) == 1);
    }
}
