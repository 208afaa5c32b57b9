package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.common.PsqlScript;
import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.testsupport.SqlScript;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A team that runs Debezium's outbox table switches to the relay without touching its writers:
 * schemas/sql/outbox-adopt-existing.sql adds the relay's columns, index and trigger to the table, the rows
 * already in it count as fanned (Debezium delivered them), and a connector whose outbox.column.* keys map
 * the event onto the table's own columns relays every row written afterwards exactly once, a
 * late-committing one too, and none of the history. Guards against a switch that replays history or loses
 * a row, against writers that stop working after the migration, and against a mapping to a column the
 * table does not have getting past validate().
 */
class AdoptExistingTableIT {
    private static final Path ADOPT_SQL = TestPostgres.schemaFile("outbox-adopt-existing.sql");
    /** Debezium's outbox table, as its Outbox Event Router documentation defines it. */
    private static final String DEBEZIUM_TABLE = "CREATE TABLE outbox (id uuid NOT NULL PRIMARY KEY,"
        + " aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL, type varchar(255) NOT NULL,"
        + " payload %s)";
    private static final Map<String, String> ADOPT_VARIABLES = Map.of("table", "outbox", "channel", "outbox_events",
        "column_subject", "aggregateid");
    /** The step of the migration that makes the rows already there count as fanned. */
    private static final String MARK_EXISTING_FANNED = "ADD COLUMN fanned_out_at TIMESTAMPTZ DEFAULT now()";
    private static final String WRITER_ROLE = "adopt_writer_" + UUID.randomUUID().toString().substring(0, 8);
    private static final List<TestDatabase> DATABASES = new ArrayList<>();

    @AfterAll
    static void dropWriterRole() {
        for (TestDatabase db : DATABASES) {
            db.execute("DROP OWNED BY " + WRITER_ROLE);
        }
        if (!DATABASES.isEmpty()) {
            DATABASES.get(0).execute("DROP ROLE " + WRITER_ROLE);
        }
    }

    /** A database with Debezium's table and the application's writer role, which may only INSERT into it. */
    private static TestDatabase debeziumDatabase(String prefix, String payloadType) {
        TestDatabase db = TestPostgres.get().createEmptyDatabase(prefix);
        if (DATABASES.isEmpty()) {
            db.execute("CREATE ROLE " + WRITER_ROLE + " LOGIN");
        }
        DATABASES.add(db);
        db.execute(String.format(DEBEZIUM_TABLE, payloadType) + "; GRANT INSERT ON outbox TO " + WRITER_ROLE);
        return db;
    }

    /** Debezium's writer, unchanged by the switch: it names Debezium's columns only, as the writer role. */
    private static final class Writer implements AutoCloseable {
        private final Connection connection;
        private final String payloadType;

        Writer(TestDatabase db) throws SQLException {
            this(db, "jsonb");
        }

        Writer(TestDatabase db, String payloadType) throws SQLException {
            this.connection = new TestDatabase(db.name(), db.jdbcUrl(), WRITER_ROLE, null).connect();
            this.payloadType = payloadType;
        }

        String write(String aggregateId, String type, String payload) throws SQLException {
            String id = UUID.randomUUID().toString();
            try (PreparedStatement ps = connection.prepareStatement("INSERT INTO outbox (id, aggregatetype,"
                + " aggregateid, type, payload) VALUES (?::uuid, 'order', ?, ?, ?::" + payloadType + ")")) {
                ps.setString(1, id);
                ps.setString(2, aggregateId);
                ps.setString(3, type);
                ps.setString(4, payload);
                ps.executeUpdate();
            }
            return id;
        }

        List<String> writeMany(int count, String prefix) throws SQLException {
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ids.add(write(prefix + "-" + (i % 7), "order.created", "{\"n\": " + i + "}"));
            }
            return ids;
        }

        /** From here on the writes of this writer commit only at {@link #commit}. */
        void begin() throws SQLException {
            connection.setAutoCommit(false);
        }

        void commit() throws SQLException {
            connection.commit();
            connection.setAutoCommit(true);
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }

    private static Map<String, String> mappedConfig(TestDatabase db, String topic) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 2);
        cfg.put("subscription.orders.topic", topic);
        cfg.put("outbox.table", "outbox");
        cfg.put("outbox.column.subject", "aggregateid");
        cfg.put("outbox.column.headers", "");
        return cfg;
    }

    /** The ids of {@code history} that reached the topic: a switch must replay none of them. */
    private static List<String> replayed(List<TestConnect.Received> received, List<String> history) {
        return received.stream().map(TestConnect.Received::id).filter(history::contains).toList();
    }

    private static long fanned(TestDatabase db, List<String> ids) {
        return db.queryLong("SELECT count(*) FROM outbox WHERE id::text = ANY(?) AND fanned_out_at IS NOT NULL",
            (Object) ids.toArray(new String[0]));
    }

    @Test
    void aDebeziumTableIsAdoptedWithItsWritersUnchangedAndRelaysEveryNewRowOnceAndNoHistory() throws Exception {
        TestDatabase db = debeziumDatabase("adopt_debezium", "jsonb");
        String connector = "adopt-debezium";
        String topic = "adopt-debezium-orders";
        try (Writer writer = new Writer(db); Writer lateWriter = new Writer(db)) {
            List<String> history = writer.writeMany(20, "old");

            db.runScript(ADOPT_SQL, ADOPT_VARIABLES);

            assertThat(db.query("SELECT count(*), count(DISTINCT seq), count(fanned_out_at), count(fanout),"
                + " count(occurred_at) FROM outbox")).containsExactly(List.of(20L, 20L, 20L, 0L, 20L));
            TestConnect.cluster().configureConnector(connector, mappedConfig(db, topic));
            try {
                List<String> live = new ArrayList<>(writer.writeMany(15, "new"));
                lateWriter.begin();
                String late = lateWriter.write("new-late", "order.created", "{\"late\": true}");
                List<String> afterLate = writer.writeMany(10, "after");
                await().atMost(Duration.ofSeconds(60)).until(() -> fanned(db, afterLate) == afterLate.size());
                lateWriter.commit();
                live.addAll(afterLate);
                live.add(late);
                await().atMost(Duration.ofSeconds(60)).until(() -> fanned(db, live) == live.size());

                assertThat(db.queryLong("SELECT count(*) FROM outbox WHERE id::text = ? AND seq < ALL(SELECT seq FROM"
                    + " outbox WHERE id::text = ANY(?))", late, afterLate.toArray(new String[0])))
                    .as("the late row has a lower seq than rows fanned out before it committed").isOne();
                List<TestConnect.Received> received = TestConnect.consume(live.size(), Duration.ofSeconds(30), topic);
                assertThat(received).extracting(TestConnect.Received::id).containsExactlyInAnyOrderElementsOf(live);
                assertThat(replayed(received, history)).isEmpty();
                assertThat(TestConnect.countRecords(topic)).as("nothing more on the topic").isEqualTo(live.size());
                Map<String, TestConnect.Received> byId = received.stream()
                    .collect(Collectors.toMap(TestConnect.Received::id, Function.identity()));
                for (List<Object> row : db.query("SELECT id::text, aggregateid, type, seq, fanout->'orders'->>'topic'"
                    + " FROM outbox WHERE id::text = ANY(?)", (Object) live.toArray(new String[0]))) {
                    TestConnect.Received r = byId.get((String) row.get(0));
                    assertThat(r.key()).isEqualTo(row.get(1));
                    assertThat(r.value().get("subject").asText()).isEqualTo(row.get(1));
                    assertThat(r.value().get("type").asText()).isEqualTo(row.get(2));
                    assertThat(r.seq()).isEqualTo(row.get(3));
                    assertThat(row.get(4)).as("stamped with where it went").isEqualTo(topic);
                    assertThat(r.headers()).as("no headers column: only the relay's own headers")
                        .containsOnlyKeys("event.id", "event.type", "subscription");
                }
                assertThat(db.queryLong("SELECT count(*) FROM outbox WHERE id::text = ANY(?) AND fanout IS NULL",
                    (Object) history.toArray(new String[0]))).as("history stays as the migration left it").isEqualTo(20);

                // the mapping is part of what a connector on the table announces: another subject column is refused
                Map<String, String> other = mappedConfig(db, topic);
                other.put("name", "adopt-debezium-by-type");
                other.put("outbox.column.subject", "aggregatetype");
                assertThat(WorkerRest.errorsOn(WorkerRest.validate(other), "subscriptions")).singleElement()
                    .asString().contains("'adopt-debezium'").contains("outbox.column.*");
                other.put("outbox.column.subject", "aggregateid");
                assertThat(WorkerRest.errorsOn(WorkerRest.validate(other), "subscriptions")).isEmpty();
            } finally {
                TestConnect.cluster().deleteConnector(connector);
            }
        }
    }

    /** Negative control: the same switch without the step that counts existing rows as fanned replays the history. */
    @Test
    void withoutCountingTheExistingRowsAsFannedTheHistoryIsReplayed() throws Exception {
        TestDatabase db = debeziumDatabase("adopt_unmarked", "jsonb");
        String connector = "adopt-unmarked";
        String topic = "adopt-unmarked-orders";
        try (Writer writer = new Writer(db)) {
            List<String> history = writer.writeMany(5, "old");
            String migration = PsqlScript.render(ADOPT_SQL, ADOPT_VARIABLES);
            String unmarked = migration.replace(MARK_EXISTING_FANNED, "ADD COLUMN fanned_out_at TIMESTAMPTZ");
            assertThat(unmarked).isNotEqualTo(migration);
            db.execute(unmarked);

            TestConnect.cluster().configureConnector(connector, mappedConfig(db, topic));
            try {
                String live = writer.write("new-0", "order.created", "{}");
                List<String> all = new ArrayList<>(history);
                all.add(live);
                await().atMost(Duration.ofSeconds(60)).until(() -> fanned(db, all) == all.size());

                List<TestConnect.Received> received = TestConnect.consume(all.size(), Duration.ofSeconds(30), topic);
                assertThat(replayed(received, history)).containsExactlyInAnyOrderElementsOf(history);
            } finally {
                TestConnect.cluster().deleteConnector(connector);
            }
        }
    }

    @Test
    void validateNamesTheKeyAndTheColumnOfAMappingTheTableCannotServe() throws Exception {
        TestDatabase db = debeziumDatabase("adopt_validate", "jsonb");
        Map<String, String> cfg = mappedConfig(db, "adopt-validate-orders");
        cfg.put("name", "adopt-validate");

        // before the migration: one error on the table, naming the script that adopts it
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(cfg), "outbox.table")).singleElement().asString()
            .contains("lacks columns").contains("fanned_out_at")
            .contains("-v column_subject=aggregateid -f schemas/sql/outbox-adopt-existing.sql");

        db.runScript(ADOPT_SQL, ADOPT_VARIABLES);
        assertThat(WorkerRest.validate(cfg).json().get("error_count").asInt()).as("the mapped config").isZero();

        cfg.put("outbox.column.subject", "aggregate_id");
        Reply typo = WorkerRest.validate(cfg);
        assertThat(WorkerRest.errorsOn(typo, "outbox.column.subject")).singleElement().asString()
            .contains("outbox.column.subject=aggregate_id").contains("no column aggregate_id").contains("aggregateid");
        assertThat(typo.json().get("error_count").asInt()).isOne();

        cfg.put("outbox.column.subject", "aggregateid");
        cfg.remove("outbox.column.headers");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(cfg), "outbox.column.headers")).singleElement().asString()
            .contains("no column headers").contains("outbox.column.headers to empty");

        // the fixes validate() names for an adopted table re-run the adopt script, with the table's columns
        cfg.put("outbox.column.headers", "");
        db.execute("DROP TRIGGER outbox_notify_insert ON outbox");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(cfg), "outbox.notify.channel")).singleElement().asString()
            .contains("-v column_subject=aggregateid -f schemas/sql/outbox-adopt-existing.sql");

        TestDatabase bytes = debeziumDatabase("adopt_bytea", "bytea");
        bytes.runScript(ADOPT_SQL, ADOPT_VARIABLES);
        Map<String, String> byteaCfg = mappedConfig(bytes, "adopt-bytea-orders");
        byteaCfg.put("name", "adopt-bytea");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(byteaCfg), "outbox.column.payload")).singleElement()
            .asString().contains("bytea").contains("jsonb, json, text or varchar");

        // a subject whose text depends on the session's time zone would be split differently by each task
        bytes.execute("ALTER TABLE outbox ADD COLUMN created timestamptz NOT NULL DEFAULT now()");
        byteaCfg.put("outbox.column.subject", "created");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(byteaCfg), "outbox.column.subject")).singleElement()
            .asString().contains("timestamp with time zone").contains("depends on the session");
        // an enum's text is its label, whatever the session: accepted (the relay reads the subject as text)
        bytes.execute("CREATE TYPE region AS ENUM ('eu', 'us'); ALTER TABLE outbox ADD COLUMN region region NOT NULL"
            + " DEFAULT 'eu'");
        byteaCfg.put("outbox.column.subject", "region");
        assertThat(WorkerRest.errorsOn(WorkerRest.validate(byteaCfg), "outbox.column.subject")).isEmpty();
    }

    /**
     * A text payload column works too, and reaches a StringConverter consumer exactly as the writer wrote
     * it (a jsonb column would have normalized it); re-running the migration changes nothing, and in
     * particular does not count the rows written since as fanned.
     */
    @Test
    void aTextPayloadArrivesAsWrittenAndARerunMarksNothing() throws Exception {
        TestDatabase db = debeziumDatabase("adopt_text", "text");
        String connector = "adopt-text";
        String topic = "adopt-text-orders";
        db.runScript(ADOPT_SQL, ADOPT_VARIABLES);
        List<String> catalog = SchemaCatalog.of(db, "public");
        String text = "{\"b\": 1,   \"a\": [2, 3.50]}";
        String id;
        try (Writer writer = new Writer(db, "text")) {
            id = writer.write("text-1", "order.created", text);
        }
        db.runScript(ADOPT_SQL, ADOPT_VARIABLES);
        assertThat(SchemaCatalog.of(db, "public")).isEqualTo(catalog);
        assertThat(db.queryLong("SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL")).as("still pending").isOne();

        Map<String, String> cfg = mappedConfig(db, topic);
        cfg.put("value.format", "payload");
        cfg.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        TestConnect.cluster().configureConnector(connector, cfg);
        try {
            List<ConsumerRecord<byte[], byte[]>> records = TestConnect.consumeRaw(1, Duration.ofSeconds(60), topic);
            assertThat(records).singleElement().satisfies(r -> {
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo(text);
                assertThat(new String(r.headers().lastHeader("event.id").value(), StandardCharsets.UTF_8)).isEqualTo(id);
                assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("text-1");
            });
        } finally {
            TestConnect.cluster().deleteConnector(connector);
        }
    }

    /** The tests apply the script through PsqlScript; psql itself (which follows the \ir) makes the same. */
    @Test
    void realPsqlAdoptsTheTableAsTheTestsDo() {
        assumeThat(SqlScript.psqlAvailable()).as("psql on the PATH").isTrue();
        TestDatabase viaHelper = debeziumDatabase("adopt_helper", "jsonb");
        TestDatabase viaPsql = debeziumDatabase("adopt_psql", "jsonb");
        viaHelper.runScript(ADOPT_SQL, ADOPT_VARIABLES);
        SqlScript.psql(viaPsql, ADOPT_SQL, new HashMap<>(ADOPT_VARIABLES));

        assertThat(SchemaCatalog.of(viaPsql, "public")).isEqualTo(SchemaCatalog.of(viaHelper, "public"))
            .anyMatch(l -> l.contains("outbox_unfanned_idx")).anyMatch(l -> l.contains("outbox_notify_insert"));
    }
}
