package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * "Send the events of those two hours to the search index again": {@code events_replay(subscription, from, to)}
 * re-delivers a range of fanned-out events to that one subscription's topic, each record marked with
 * {@code event.replay}, while the other subscription sees nothing new and no row's fanout changes; a restart
 * mid-replay resumes (at least once, nothing outside the range), and a cancel stops it. The negative control is
 * the replay users improvise today, clearing {@code fanned_out_at}: every subscription gets the events again.
 */
class ReplayToOneSubscriptionIT {
    private static final String CONNECTOR = "replay-one";
    private static final String SEARCH = "replay-search";
    private static final String HOOKS = "replay-hooks";
    private static final int EVENTS = 300;
    /** Event g (0-based) occurred at BASE + g seconds. */
    private static final String BASE = "timestamptz '2026-01-01 00:00:00+00'";
    private static TestDatabase db;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("replay_one");
        db.execute("INSERT INTO events(type, subject, payload, occurred_at)"
            + " SELECT (ARRAY['order.created', 'order.paid', 'audit.logged'])[1 + g % 3], 'order-' || (g % 7),"
            + " jsonb_build_object('n', g), " + BASE + " + g * interval '1 second' FROM generate_series(0, "
            + (EVENTS - 1) + ") g");
        // a request's progress is written slowly (each write 150 ms), so "mid-replay" does not depend on speed
        db.execute("""
            CREATE FUNCTION test_slow_progress() RETURNS trigger LANGUAGE plpgsql AS $fn$
            BEGIN PERFORM pg_sleep(0.15); RETURN NEW; END; $fn$;
            CREATE TRIGGER test_slow_progress BEFORE UPDATE ON events_replays FOR EACH ROW
              WHEN (NEW.progress_seq IS DISTINCT FROM OLD.progress_seq) EXECUTE FUNCTION test_slow_progress();
            """);
        Map<String, String> cfg = TestConnect.relayConfig(db, "search,webhooks", 1);
        cfg.put("subscription.search.topic", SEARCH);
        cfg.put("subscription.search.event.types", "order.*");
        cfg.put("subscription.webhooks.topic", HOOKS);
        cfg.put("outbox.batch.size", "10");
        cfg.put("outbox.replay.check.interval.ms", "200");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
        await().atMost(Duration.ofSeconds(30))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0);
    }

    @AfterAll
    static void stop() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    private static String at(int second) {
        return BASE + " + interval '" + second + " seconds'";
    }

    private static long replay(String subscription, int fromSecond, int toSecond) {
        return db.queryLong("SELECT events_replay(?, " + at(fromSecond) + ", " + at(toSecond) + ")", subscription);
    }

    private static void awaitDone(long request) {
        await().atMost(Duration.ofSeconds(30)).until(() ->
            db.queryLong("SELECT count(*) FROM events_replays WHERE id = ? AND done_at IS NOT NULL", request) == 1);
    }

    /** The ids of the events with occurred_at in [from, to] seconds whose type matches {@code typeLike}. */
    private static Set<String> idsIn(int fromSecond, int toSecond, String typeLike) {
        return db.query("SELECT id::text FROM events WHERE occurred_at BETWEEN " + at(fromSecond) + " AND "
            + at(toSecond) + " AND type LIKE ?", typeLike).stream().map(r -> (String) r.get(0))
            .collect(Collectors.toSet());
    }

    private static List<TestConnect.Received> replayed(String topic, long request) {
        int all = (int) TestConnect.countRecords(topic);
        return TestConnect.consume(all, Duration.ofSeconds(20), topic).stream()
            .filter(r -> Long.toString(request).equals(r.headers().get("event.replay"))).toList();
    }

    private static String fanoutDigest() {
        return (String) db.query("SELECT md5(string_agg(seq || '|' || fanned_out_at::text || '|' || fanout::text, ','"
            + " ORDER BY seq)) FROM events").get(0).get(0);
    }

    @Test
    void aRangeGoesAgainToOneSubscriptionOnlyMarkedOnceInSeqOrderPerSubject() {
        String fanoutBefore = fanoutDigest();
        long hooksBefore = TestConnect.countRecords(HOOKS);
        long searchBefore = TestConnect.countRecords(SEARCH);
        Set<String> expected = idsIn(100, 149, "order.%");
        assertThat(expected).hasSizeGreaterThan(30);

        long request = replay("search", 100, 149);
        awaitDone(request);

        List<TestConnect.Received> replayed = replayed(SEARCH, request);
        assertThat(replayed.stream().map(TestConnect.Received::id).toList())
            .as("every order.* event of [from, to], both ends included, exactly once").hasSize(expected.size())
            .containsExactlyInAnyOrderElementsOf(expected);
        assertThat(TestConnect.countRecords(SEARCH)).isEqualTo(searchBefore + expected.size());
        assertThat(TestConnect.countRecords(HOOKS)).as("the other subscription got nothing").isEqualTo(hooksBefore);
        assertThat(fanoutDigest()).as("fanned_out_at and fanout of the rows are untouched").isEqualTo(fanoutBefore);
        assertThat(db.queryLong("SELECT sent FROM events_replays WHERE id = ?", request)).isEqualTo(expected.size());

        Map<String, Long> lastSeq = new HashMap<>();
        for (TestConnect.Received r : replayed) {
            Long previous = lastSeq.put(r.key() + "@" + r.partition(), r.seq());
            assertThat(previous == null || previous < r.seq()).as("seq order of subject %s", r.key()).isTrue();
        }
        // the same record as the live one, plus the header
        TestConnect.Received again = replayed.get(0);
        TestConnect.Received live = TestConnect.consume((int) searchBefore, Duration.ofSeconds(20), SEARCH).stream()
            .filter(r -> r.id().equals(again.id()) && !r.headers().containsKey("event.replay")).findFirst().orElseThrow();
        assertThat(again.value()).isEqualTo(live.value());
        assertThat(again.key()).isEqualTo(live.key());
        Map<String, String> headers = new HashMap<>(again.headers());
        headers.remove("event.replay");
        assertThat(headers).isEqualTo(live.headers());
    }

    @Test
    void negativeControlClearingFannedOutAtSendsTheRangeToEverySubscription() {
        long hooksBefore = TestConnect.countRecords(HOOKS);
        long searchBefore = TestConnect.countRecords(SEARCH);
        int all = idsIn(250, 259, "%").size();
        int orders = idsIn(250, 259, "order.%").size();

        db.execute("UPDATE events SET fanned_out_at = NULL, fanout = NULL, attempts = 0 WHERE occurred_at BETWEEN "
            + at(250) + " AND " + at(259));
        await().atMost(Duration.ofSeconds(30))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0);

        assertThat(TestConnect.countRecords(HOOKS)).as("webhooks got the range again too").isEqualTo(hooksBefore + all);
        assertThat(TestConnect.countRecords(SEARCH)).isEqualTo(searchBefore + orders);
    }

    @Test
    void aRestartMidReplayResumesAndSendsNothingOutsideTheRange() {
        Set<String> expected = idsIn(0, 199, "%");
        // twenty chunks of ten, each progress write 150 ms: the stop lands seconds before the walk could end
        long request = replay("webhooks", 0, 199);
        long start = db.queryLong("SELECT progress_seq FROM events_replays WHERE id = ?", request);
        await().atMost(Duration.ofSeconds(30)).until(() ->
            db.queryLong("SELECT progress_seq FROM events_replays WHERE id = ?", request) > start);

        TestConnect.cluster().stopConnector(CONNECTOR);
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT count(*) FROM pg_stat_activity"
            + " WHERE datname = current_database() AND application_name LIKE 'outbox-relay:" + CONNECTOR + "%'") == 0);
        assertThat(db.query("SELECT done_at IS NULL, lease_owner IS NULL FROM events_replays WHERE id = ?", request))
            .as("stopped mid-replay, its lease given back").containsExactly(List.of(true, true));
        TestConnect.cluster().resumeConnector(CONNECTOR);
        awaitDone(request);

        Set<String> ids = replayed(HOOKS, request).stream().map(TestConnect.Received::id).collect(Collectors.toSet());
        assertThat(ids).as("every event of the range at least once, none outside it")
            .containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void aCancelledReplayStops() {
        long total = idsIn(0, EVENTS, "%").size();
        long request = replay("webhooks", 0, EVENTS);
        long start = db.queryLong("SELECT progress_seq FROM events_replays WHERE id = ?", request);
        await().atMost(Duration.ofSeconds(30)).until(() ->
            db.queryLong("SELECT progress_seq FROM events_replays WHERE id = ?", request) > start);

        assertThat(cancel(request)).isTrue();
        // one task serves one request at a time: once a later one is done, the cancelled one was dropped
        long later = replay("webhooks", 0, 0);
        awaitDone(later);

        List<List<Object>> row = db.query("SELECT done_at IS NULL, progress_seq < through_seq, sent FROM events_replays"
            + " WHERE id = ?", request);
        assertThat(row.get(0).subList(0, 2)).containsExactly(true, true);
        long sent = ((Number) row.get(0).get(2)).longValue();
        assertThat(sent).isLessThan(total);
        assertThat(replayed(HOOKS, request)).as("nothing after the chunk in flight at the cancel")
            .hasSizeLessThanOrEqualTo((int) sent + 10);
        assertThat(cancel(request)).as("a second cancel finds nothing open").isFalse();
    }

    @Test
    void theFunctionRefusesAnEmptySubscriptionAndAReversedRangeSaysWhy() {
        assertThatThrownBy(() -> replay(" ", 0, 10)).hasStackTraceContaining("the subscription is empty");
        assertThatThrownBy(() -> replay("search", 10, 0))
            .hasStackTraceContaining("is after to").hasStackTraceContaining("swap them");
        assertThatThrownBy(() -> db.queryLong("SELECT events_replay('search', NULL, now())"))
            .hasStackTraceContaining("must not be NULL");
    }

    @Test
    void aRequestForASubscriptionNoConnectorServesStaysPending() {
        long request = replay("search.v2", 0, 10);
        long served = replay("search", 0, 0);
        awaitDone(served); // the task looked at the requests more than once since

        assertThat(db.query("SELECT done_at IS NULL, lease_owner IS NULL, sent FROM events_replays WHERE id = ?",
            request)).containsExactly(List.of(true, true, 0L));
        assertThat(cancel(request)).isTrue();
    }

    private static boolean cancel(long request) {
        return (Boolean) db.query("SELECT events_replay_cancel(?)", request).get(0).get(0);
    }
}
