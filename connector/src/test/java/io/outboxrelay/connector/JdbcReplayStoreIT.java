package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The statements of replay.sql on PostgreSQL (migration V6): one task serves a request at a time and another takes
 * it over only once its lease ran out, after which the first can move it no more; a chunk reads only fanned-out
 * rows of the range, in seq order, and writes none; a cancelled request is neither claimed nor moved.
 */
class JdbcReplayStoreIT {
    private static final String RANGE = "timestamptz '2026-01-01 00:00:00+00'";
    private static TestDatabase db;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("replay_store");
        pool = db.pool("replay-store-it", 4);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    @BeforeEach
    void rows() {
        db.execute("TRUNCATE events, events_replays RESTART IDENTITY");
        // seconds 0..9 after RANGE; odd seqs fanned out, even ones still pending
        db.execute("INSERT INTO events(type, subject, payload, headers, occurred_at, fanned_out_at, fanout)"
            + " SELECT 'order.created', 'o-' || (g % 3), jsonb_build_object('n', g), '{\"traceparent\": \"t\"}', "
            + RANGE + " + g * interval '1 second', CASE WHEN g % 2 = 0 THEN now() END, CASE WHEN g % 2 = 0 THEN"
            + " '{\"search\": {\"topic\": \"s\", \"partition\": 0, \"offset\": 1}}'::jsonb END FROM generate_series(0, 9) g");
    }

    private static JdbcReplayStore store(String owner, long leaseMs) {
        return new JdbcReplayStore(pool, "events", "\"events\"", OutboxColumns.DEFAULT, owner, List.of("search"), leaseMs,
            OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES);
    }

    private static long replay(String subscription, int fromSecond, int toSecond) {
        return db.queryLong("SELECT events_replay(?, " + RANGE + " + interval '" + fromSecond + " seconds', " + RANGE
            + " + interval '" + toSecond + " seconds')", subscription);
    }

    @Test
    void aChunkReadsTheFannedRowsOfTheRangeInSeqOrderAndWritesNone() throws Exception {
        String before = fanoutDigest();
        long id = replay("search", 2, 8); // seqs 3..9, of which 3, 5, 7, 9 are fanned out
        JdbcReplayStore a = store("relay-0#a", 60_000);
        ReplayStore.Request request = a.claim(0);
        assertThat(request.id()).isEqualTo(id);
        assertThat(request.progressSeq()).as("the range starts at seq 3").isEqualTo(2);
        assertThat(request.throughSeq()).isEqualTo(10);

        List<ClaimedRow> first = a.chunk(request, 3);
        assertThat(first).extracting(ClaimedRow::seq).containsExactly(3L, 5L, 7L);
        ClaimedRow row = first.get(0);
        assertThat(row.unreadable()).isNull();
        assertThat(row.type()).isEqualTo("order.created");
        assertThat(row.payload()).isEqualTo("{\"n\": 2}");
        assertThat(row.headerKeys()).containsExactly("traceparent");
        assertThat(a.progress(id, 7, 3, false)).isTrue();
        assertThat(a.chunk(a.claim(id), 3)).extracting(ClaimedRow::seq).containsExactly(9L);
        assertThat(a.progress(id, 10, 1, true)).isTrue();

        assertThat(db.query("SELECT progress_seq, sent, done_at IS NOT NULL, lease_owner IS NULL FROM events_replays"))
            .containsExactly(List.of(10L, 4L, true, true));
        assertThat(fanoutDigest()).as("fanned_out_at and fanout only read").isEqualTo(before);
        assertThat(a.progress(id, 10, 0, false)).as("a done request moves no more").isFalse();
    }

    @Test
    void oneTaskServesARequestAtATimeAndAnotherTakesItOverOnlyWhenItsLeaseRanOut() throws Exception {
        long id = replay("search", 0, 9);
        JdbcReplayStore a = store("relay-0#a", 300);
        JdbcReplayStore b = store("relay-1#b", 60_000);
        ReplayStore.Request request = a.claim(0);
        assertThat(request.id()).isEqualTo(id);
        assertThat(b.claim(0)).as("leased by a").isNull();
        assertThat(a.claim(id)).as("a renews its own lease").isNotNull();

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> b.claim(0) != null);
        assertThat(a.progress(id, 5, 3, false)).as("a lost the request").isFalse();
        assertThat(a.chunk(request, 10)).as("and reads nothing of it").isEmpty();
        assertThat(b.progress(id, 5, 3, false)).isTrue();
        b.release(id);
        assertThat(db.query("SELECT progress_seq, lease_owner IS NULL FROM events_replays"))
            .containsExactly(List.of(5L, true));
    }

    @Test
    void aCancelledRequestIsNeitherClaimedNorMovedAndAnotherSubscriptionsIsNotClaimed() throws Exception {
        long other = replay("webhooks", 0, 9);
        long id = replay("search", 0, 9);
        JdbcReplayStore a = store("relay-0#a", 60_000);
        ReplayStore.Request request = a.claim(0);
        assertThat(request.id()).as("webhooks is not this connector's").isEqualTo(id);

        assertThat(cancel(id)).isTrue();
        assertThat(a.chunk(request, 10)).isEmpty();
        assertThat(a.progress(id, 5, 3, false)).isFalse();
        assertThat(a.claim(id)).isNull();
        assertThat(a.claim(0)).isNull();
        assertThat(db.queryLong("SELECT count(*) FROM events_replays WHERE id = ? AND lease_owner IS NULL", other))
            .isOne();
    }

    private static String fanoutDigest() {
        return (String) db.query("SELECT md5(string_agg(seq || '|' || coalesce(fanned_out_at::text, '-') || '|'"
            + " || coalesce(fanout::text, '-'), ',' ORDER BY seq)) FROM events").get(0).get(0);
    }

    private static boolean cancel(long request) {
        return (Boolean) db.query("SELECT events_replay_cancel(?)", request).get(0).get(0);
    }
}
