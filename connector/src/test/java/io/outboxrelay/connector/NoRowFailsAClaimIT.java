package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.Backoff;
import io.outboxrelay.common.DatabaseText;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * No single row can fail a claim, and a claim's memory is bounded by bytes: a row whose text the driver
 * cannot decode, a row too large to produce and a row past its attempts come back from the claim as rows
 * to poison (the latter two without their payload), and a claim of big rows stops at its byte budget.
 * Before, each of the first kind failed the whole claim, every time, and nothing behind it moved.
 */
class NoRowFailsAClaimIT {
    /** Bytes that are not UTF-8, stored as they are by a database whose encoding is SQL_ASCII. */
    private static final String NOT_UTF8 = "convert_from('\\x6f7264ff72'::bytea, 'SQL_ASCII')";
    /** "ord?r" with 0x81, which WIN1252 stores as it is (no byte is invalid there) but maps to no character. */
    private static final String NOT_WIN1252 = "convert_from('\\x6f72648172'::bytea, 'WIN1252')";

    private static final RejectionRules RULES = new RejectionRules(new OutboxSourceConnectorConfig(Map.of(
        "connection.url", "jdbc:postgresql://localhost/app", "subscriptions", "webhooks")), new Backoff(1, 2));

    private static TestDatabase db;
    private static TestDatabase ascii;
    private static TestDatabase win1252;
    private static HikariDataSource pool;
    private static HikariDataSource asciiPool;
    private static HikariDataSource win1252Pool;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("claim_rows");
        pool = db.pool("claim-rows-it", 2);
        ascii = databaseIn("SQL_ASCII");
        asciiPool = ascii.pool("claim-rows-ascii-it", 2);
        win1252 = databaseIn("WIN1252");
        win1252Pool = win1252.pool("claim-rows-win1252-it", 2);
    }

    private static TestDatabase databaseIn(String encoding) {
        return databaseIn(encoding, "claim_rows_" + encoding.toLowerCase(java.util.Locale.ROOT));
    }

    private static TestDatabase databaseIn(String encoding, String name) {
        new TestDatabase("postgres", TestPostgres.get().jdbcUrl("postgres"), db.user(), db.password()).execute(
            "CREATE DATABASE " + name + " ENCODING '" + encoding + "' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
        TestDatabase created = new TestDatabase(name, TestPostgres.get().jdbcUrl(name), db.user(), db.password());
        created.runScript(TestPostgres.schemaFile("outbox.sql"));
        return created;
    }

    @AfterAll
    static void stop() {
        pool.close();
        asciiPool.close();
        win1252Pool.close();
    }

    @BeforeEach
    void emptyOutboxes() {
        db.execute("TRUNCATE events RESTART IDENTITY");
        ascii.execute("TRUNCATE events RESTART IDENTITY");
        win1252.execute("TRUNCATE events RESTART IDENTITY");
    }

    private static JdbcOutboxStore store(HikariDataSource dataSource) {
        return new JdbcOutboxStore(dataSource, "events", "\"events\"", "claim-rows-0", "1", 1, 0, 60_000, "", null);
    }

    private static ClaimedRow bySeq(List<ClaimedRow> rows, long seq) {
        return rows.stream().filter(r -> r.seq() == seq).findFirst().orElseThrow();
    }

    /**
     * Six rows, the middle four each with bytes that are no text in one field ({@code noText}, an SQL expression):
     * the claim returns all six, the four as rows to poison whose reason names the field and {@code why}, the first
     * (payload {@code {"a": okText}}) and the last (subject {@code okSubject}) to produce.
     */
    private static List<ClaimedRow> claimFourWithoutTextBetweenTwo(TestDatabase d, HikariDataSource p, String okText,
                                                                    String noText, String okSubject, String why)
        throws Exception {
        d.execute("INSERT INTO events(type, subject, payload) VALUES ('order.created', 'ok-1',"
            + " ('{\"a\": \"' || " + okText + " || '\"}')::jsonb)");
        d.execute("INSERT INTO events(type, subject, payload) VALUES ('order.created', 'bad-payload',"
            + " ('{\"a\": \"' || " + noText + " || '\"}')::jsonb)");
        d.execute("INSERT INTO events(type, subject) VALUES (" + noText + ", 'bad-type')");
        d.execute("INSERT INTO events(type, subject, headers) VALUES ('order.created', 'bad-headers',"
            + " ('{\"h\": \"' || " + noText + " || '\"}')::jsonb)");
        d.execute("INSERT INTO events(type, subject) VALUES ('order.created', " + noText + ")");
        d.execute("INSERT INTO events(type, subject) VALUES ('order.created', " + okSubject + ")");

        List<ClaimedRow> rows = store(p).claim(10).rows();

        assertThat(rows).extracting(ClaimedRow::seq).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        assertThat(RULES.beforeProducing(bySeq(rows, 1))).isNull();
        assertThat(RULES.beforeProducing(bySeq(rows, 6))).isNull();
        String[] columns = {"payload", "type", "headers", "subject"};
        for (int i = 0; i < columns.length; i++) {
            assertThat(RULES.beforeProducing(bySeq(rows, i + 2))).as(columns[i])
                .contains(columns[i]).contains(why).contains("events_requeue(" + (i + 2) + ")");
        }
        return rows;
    }

    @Test
    void rowsTheDriverCannotDecodeComeBackAsRowsToPoisonAndTheOthersAreRead() throws Exception {
        List<ClaimedRow> rows = claimFourWithoutTextBetweenTwo(ascii, asciiPool, "'x'", NOT_UTF8, "'ok-2'",
            "not valid UTF-8");

        assertThat(bySeq(rows, 6).subject()).isEqualTo("ok-2");
    }

    /**
     * Not only SQL_ASCII: a single-byte encoding such as WIN1252 stores every byte, also those it maps to no
     * character, and the server then refuses to send the row to a UTF8 client (22P05). Before, that failed every
     * claim that reached the row, attempt and lease rolled back, so the row was never poisoned and the task failed
     * at each restart. Its other rows must read as the server's own conversion reads them.
     */
    @Test
    void inAWin1252DatabaseBytesWithoutACharacterMakeRowsToPoisonAndTheOthersReadAsTheServerConverts()
        throws Exception {
        List<ClaimedRow> rows = claimFourWithoutTextBetweenTwo(win1252, win1252Pool,
            "convert_from('\\x80e9'::bytea, 'WIN1252')", NOT_WIN1252,
            "'ok-' || convert_from('\\xfc'::bytea, 'WIN1252')", "no character of the database's encoding WIN1252");

        assertThat(bySeq(rows, 1).payload()).isEqualTo("{\"a\": \"\u20ac\u00e9\"}");
        assertThat(bySeq(rows, 6).subject()).isEqualTo("ok-\u00fc");
        List<PoisonedRow> poisoned = store(win1252Pool).poison(List.of(new OutboxStore.Poison(3, "test: unmappable",
            bySeq(rows, 3).attempts())));
        assertThat(poisoned).singleElement().satisfies(p -> assertThat(p.type()).startsWith("ord").endsWith("r"));
    }

    /**
     * The shipped table has no NULL id or type, and validation refuses a nullable one; a column changed after that
     * can hold one. Before, the claim counted such a row's bytes as NULL and left it unread, so it was poisoned as
     * "claimed past outbox.max.attempts" after one claim; now the task names the NULL field.
     */
    @Test
    void aRowWithANullIdOrTypeIsARowToPoisonForThatAndTheOthersAreRead() throws Exception {
        TestDatabase loose = databaseIn("UTF8");
        loose.execute("ALTER TABLE events ALTER COLUMN id DROP NOT NULL, ALTER COLUMN id DROP DEFAULT,"
            + " ALTER COLUMN type DROP NOT NULL");
        loose.execute("INSERT INTO events(id, type, subject) VALUES (gen_random_uuid(), 'order.created', 'ok-1')");
        loose.execute("INSERT INTO events(type, subject) VALUES ('order.created', 'no-id')");
        loose.execute("INSERT INTO events(id, subject) VALUES (gen_random_uuid(), 'no-type')");
        loose.execute("INSERT INTO events(id, type, subject) VALUES (gen_random_uuid(), 'order.created', 'ok-4')");
        try (HikariDataSource loosePool = loose.pool("claim-rows-null-id-it", 1)) {
            List<ClaimedRow> rows = store(loosePool).claim(10).rows();

            assertThat(rows).extracting(ClaimedRow::seq).containsExactly(1L, 2L, 3L, 4L);
            assertThat(RULES.beforeProducing(bySeq(rows, 1))).isNull();
            assertThat(RULES.beforeProducing(bySeq(rows, 2))).contains("id is NULL").contains("events_requeue(2)");
            assertThat(RULES.beforeProducing(bySeq(rows, 3))).contains("type is NULL").contains("events_requeue(3)");
            assertThat(RULES.beforeProducing(bySeq(rows, 4))).isNull();
        }
    }

    /**
     * An id mapped to a text column can hold such a byte too. Read leniently it went out changed (U+FFFD: two rows
     * could share an event.id) and came back in the stamp's receipts, which the server could not convert into
     * WIN1252 (22P05): every stamp of the share failed. It is read strictly now, and the row poisoned, described with
     * a "?" for the byte.
     */
    @Test
    void inAWin1252DatabaseAnIdWithoutACharacterMakesARowToPoison() throws Exception {
        TestDatabase textIds = databaseIn("WIN1252", "claim_rows_win1252_text_ids");
        textIds.execute("DROP VIEW events_pending, events_poisoned"); // they read id as it is typed
        textIds.execute("ALTER TABLE events ALTER COLUMN id DROP DEFAULT, ALTER COLUMN id TYPE text");
        textIds.execute("INSERT INTO events(id, type, subject) VALUES ('id-1', 'order.created', 'ok-1')");
        textIds.execute("INSERT INTO events(id, type, subject) VALUES (" + NOT_WIN1252 + ", 'order.created', 'bad-id')");
        textIds.execute("INSERT INTO events(id, type, subject) VALUES ('id-3', 'order.created', 'ok-3')");
        try (HikariDataSource textIdsPool = textIds.pool("claim-rows-text-ids-it", 1)) {
            List<ClaimedRow> rows = store(textIdsPool).claim(10).rows();

            assertThat(rows).extracting(ClaimedRow::seq).containsExactly(1L, 2L, 3L);
            assertThat(RULES.beforeProducing(bySeq(rows, 1))).isNull();
            assertThat(RULES.beforeProducing(bySeq(rows, 2))).contains("id holds bytes").contains("WIN1252");
            assertThat(RULES.beforeProducing(bySeq(rows, 3))).isNull();
            assertThat(store(textIdsPool).poison(List.of(new OutboxStore.Poison(2, "test: unmappable id",
                bySeq(rows, 2).attempts()))))
                .singleElement().satisfies(p -> assertThat(p.id()).isEqualTo("ord?r"));
        }
    }

    /**
     * The task reads these encodings' bytes itself: it must read each byte as PostgreSQL's own conversion to UTF8
     * does, and refuse exactly the bytes the server refuses, or a relayed event would differ from the row.
     */
    @Test
    void theTaskReadsEveryByteOfTheEncodingsItDecodesAsTheServerConvertsIt() throws Exception {
        db.execute("CREATE OR REPLACE FUNCTION test_to_utf8(b bytea, enc name) RETURNS bytea LANGUAGE plpgsql AS"
            + " $$ BEGIN RETURN convert(b, enc, 'UTF8'); EXCEPTION WHEN OTHERS THEN RETURN NULL; END $$");
        int compared = 0;
        for (Map.Entry<String, java.nio.charset.Charset> e : new java.util.TreeMap<>(DatabaseText.rawEncodings())
            .entrySet()) {
            if (e.getKey().equals("SQL_ASCII")) {
                continue; // no conversion: its bytes are taken as UTF-8, whatever they are
            }
            for (List<Object> row : db.query("SELECT b, test_to_utf8(decode(lpad(to_hex(b), 2, '0'), 'hex'), ?::name)"
                + " FROM generate_series(1, 255) b ORDER BY b", e.getKey())) {
                byte[] one = {(byte) ((Number) row.get(0)).intValue()};
                byte[] server = (byte[]) row.get(1);
                String ours;
                try {
                    ours = DatabaseText.strict(java.util.HexFormat.of().formatHex(one)
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII), e.getKey());
                } catch (java.nio.charset.CharacterCodingException refused) {
                    ours = null;
                }
                assertThat(ours).as("%s byte %02x", e.getKey(), one[0])
                    .isEqualTo(server == null ? null : new String(server, java.nio.charset.StandardCharsets.UTF_8));
                compared++;
            }
        }
        assertThat(compared).isGreaterThanOrEqualTo(20 * 255);
    }

    @Test
    void aRowTooLargeToProduceIsClaimedWithoutItsPayloadAndRefusedForItsSize() throws Exception {
        db.insertEvents(1, 1, "order.created");
        long big = db.insertEvent("order.created", "big-1", "{\"blob\": \"" + "x".repeat(3_000_000) + "\"}");
        db.insertEvents(1, 1, "order.created");

        List<ClaimedRow> rows = store(pool).claim(10).rows();

        assertThat(rows).hasSize(3);
        ClaimedRow row = bySeq(rows, big);
        assertThat(row.payload()).as("not read").isNull();
        assertThat(RULES.beforeProducing(row)).contains("outbox.max.record.bytes=1000000").contains("3000")
            .contains("events_requeue(" + big + ")");
        assertThat(RULES.beforeProducing(bySeq(rows, big + 1))).isNull();
    }

    @Test
    void aRowPastItsAttemptsIsClaimedWithoutItsPayload() throws Exception {
        long seq = db.insertEvent("order.created", "tired-1", "{\"n\": 1}");
        db.execute("UPDATE events SET attempts = 5, last_error = 'test: the task died' WHERE seq = " + seq);

        ClaimedRow row = store(pool).claim(10).rows().get(0);

        assertThat(row.attempts()).isEqualTo(6);
        assertThat(row.payload()).as("not read").isNull();
        assertThat(RULES.beforeProducing(row)).contains("claimed 6 times").contains("test: the task died");
    }

    @Test
    void aRowWhoseAttemptsReachIntsTopIsPoisonedNotAnOverflowThatFailsEveryClaim() throws Exception {
        long seq = db.insertEvent("order.created", "tired-2", "{\"n\": 1}");
        db.execute("UPDATE events SET attempts = 2147483647 WHERE seq = " + seq);

        ClaimedRow row = store(pool).claim(10).rows().get(0);

        assertThat(row.attempts()).isEqualTo(Integer.MAX_VALUE);
        assertThat(row.payload()).as("not read").isNull();
        assertThat(RULES.beforeProducing(row)).contains("claimed 2147483647 times");
    }

    @Test
    void aRowParkedUntilInfinityFailsNoClaimAndIsNotClaimed() throws Exception {
        long parked = db.insertEvent("order.created", "parked", "{\"n\": 1}");
        db.execute("UPDATE events SET next_attempt_at = 'infinity' WHERE seq = " + parked);
        long due = db.insertEvent("order.created", "due", "{\"n\": 2}");

        OutboxStore.Claim claim = store(pool).claim(10);

        assertThat(claim.rows()).extracting(ClaimedRow::seq).as("the due row only").containsExactly(due);
    }

    @Test
    void aClaimOfBigRowsStopsAtItsByteBudgetAndSaysMoreWait() throws Exception {
        db.execute("INSERT INTO events(type, subject, payload) SELECT 'order.created', 'big-' || g,"
            + " jsonb_build_object('blob', repeat('x', 900000)) FROM generate_series(1, 12) g");

        JdbcOutboxStore store = store(pool);
        OutboxStore.Claim claim = store.claim(12);

        // 8 MiB by default: nine rows of 900 KB fit, a tenth would not
        assertThat(claim.rows()).extracting(ClaimedRow::seq).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(claim.more(12)).isTrue();
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE lease_owner IS NOT NULL")).isEqualTo(9);
        assertThat(store.nextClaimAsksFor(1_000)).as("no more rows read than fit, and one to see more wait")
            .isEqualTo(10);

        OutboxStore.Claim rest = store.claim(1_000);
        assertThat(rest.rows()).extracting(ClaimedRow::seq).containsExactly(10L, 11L, 12L);
        assertThat(rest.more(1_000)).isFalse();
        assertThat(store.nextClaimAsksFor(1_000)).as("not cut: the claim size decides again").isEqualTo(1_000);
    }

    @Test
    void aRowTheDriverCannotDecodeIsPoisonedAndDescribedByWhatCanBeRead() throws Exception {
        ascii.execute("INSERT INTO events(type, subject) VALUES (" + NOT_UTF8 + ", " + NOT_UTF8 + ")");

        List<PoisonedRow> poisoned = store(asciiPool).poison(List.of(new OutboxStore.Poison(1, "test: undecodable", 0)));

        assertThat(poisoned).singleElement().satisfies(p -> {
            assertThat(p.type()).startsWith("ord").endsWith("r");
            assertThat(p.subject()).startsWith("ord");
            assertThat(p.reason()).isEqualTo("test: undecodable");
        });
        assertThat(ascii.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL")).isEqualTo(1);
    }

    /** The poisoning's result feeds one log line and one poison record: a 300 KB type must not. */
    @Test
    void whatThePoisoningReturnsCutsAHugeTypeAndSubjectShort() throws Exception {
        long seq = db.insertEvent(".".repeat(300_000), "s".repeat(300_000), "{}");

        PoisonedRow p = store(pool).poison(List.of(new OutboxStore.Poison(seq, "test", 0))).get(0);

        assertThat(p.type()).hasSize(JdbcOutboxStore.POISONED_TEXT_MAX_CHARS);
        assertThat(p.subject()).hasSize(JdbcOutboxStore.POISONED_TEXT_MAX_CHARS);
    }
}
