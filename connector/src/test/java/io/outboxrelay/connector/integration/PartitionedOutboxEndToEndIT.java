package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The outbox made by {@code psql -v partitioned=daily -f schemas/sql/outbox.sql}, relayed by a real Connect
 * worker: every guarantee of a plain table holds across its partitions (a partition V5 made, one an operator
 * added by hand, the default one), the late-committing row included.
 */
class PartitionedOutboxEndToEndIT {
    private static final String CONNECTOR = "partitioned";
    private static final String TOPIC = "partitioned-events";
    private static final int EVENTS = 100_000;
    private static TestDatabase db;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createEmptyDatabase("partitioned_e2e");
        db.runScript(TestPostgres.schemaFile("outbox.sql"), Map.of("partitioned", "daily"));
        // yesterday's partition, as an operator adds one by hand; the day before lands in the default partition
        db.execute("""
            DO $$ BEGIN
              EXECUTE format('CREATE TABLE events_yesterday PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                ((now() AT TIME ZONE 'UTC')::date - 1)::timestamp AT TIME ZONE 'UTC', (now() AT TIME ZONE 'UTC')::date::timestamp AT TIME ZONE 'UTC');
            END $$""");
        Map<String, String> cfg = TestConnect.relayConfig(db, "part", 1);
        cfg.put("subscription.part.topic", TOPIC);
        cfg.put("outbox.batch.max.size", "2000");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
    }

    @AfterAll
    static void stop() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void aLowerSeqThatCommitsAfterAHigherOneIsStillDeliveredFromAnotherPartition() throws Exception {
        List<Long> cursorSeen = new ArrayList<>();
        try (Connection early = db.connect(); Connection late = db.connect()) {
            late.setAutoCommit(false);
            long lateSeq = insert(late, "late-1", "now() - interval '1 day'");  // lower seq, yesterday's partition
            long earlySeq = insert(early, "late-2", "now()");                   // higher seq, today's, committed
            assertThat(lateSeq).isLessThan(earlySeq);
            await().atMost(Duration.ofSeconds(30)).until(() -> fannedOut(earlySeq));
            long cursor = readAfter(0, cursorSeen); // a seq > cursor reader moves past the uncommitted row

            late.commit();
            await().atMost(Duration.ofSeconds(30)).until(() -> fannedOut(lateSeq));
            readAfter(cursor, cursorSeen);

            assertThat(TestConnect.consume((int) TestConnect.countRecords(TOPIC), Duration.ofSeconds(30), TOPIC).stream()
                .filter(r -> r.key().startsWith("late-")).map(TestConnect.Received::seq))
                .containsExactlyInAnyOrder(lateSeq, earlySeq);
            // negative control: the cursor design over the same history never sees the late row
            assertThat(cursorSeen).contains(earlySeq).doesNotContain(lateSeq);
        }
    }

    @Test
    void aHundredThousandEventsAcrossPartitionsArriveOnceEachInSeqOrderPerSubject() {
        db.execute("INSERT INTO events(type, subject, payload, occurred_at)"
            + " SELECT 'order.created', 'bulk-' || (g % 500), jsonb_build_object('n', g),"
            + " now() - (g % 3) * interval '1 day' FROM generate_series(1, " + EVENTS + ") g");
        assertThat(db.queryLong("SELECT count(DISTINCT tableoid) FROM events WHERE subject LIKE 'bulk-%'")).isEqualTo(3);
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
            assertThat(db.queryLong("SELECT count(*) FROM events WHERE subject LIKE 'bulk-%' AND fanned_out_at IS NULL"))
                .as("rows still to fan out").isZero());

        List<TestConnect.Received> bulk = TestConnect.consume((int) TestConnect.countRecords(TOPIC), Duration.ofSeconds(60), TOPIC).stream()
            .filter(r -> r.key().startsWith("bulk-")).toList();
        Set<String> ids = new HashSet<>();
        Map<String, Long> lastSeq = new HashMap<>();
        List<String> outOfOrder = new ArrayList<>();
        for (TestConnect.Received r : bulk) {
            ids.add(r.id());
            Long before = lastSeq.put(r.key(), r.seq());
            if (before != null && before >= r.seq()) {
                outOfOrder.add(r.key() + ": " + before + " then " + r.seq());
            }
        }
        assertThat(bulk).hasSize(EVENTS);          // no duplicate...
        assertThat(ids).hasSize(EVENTS)            // ...and none lost
            .isEqualTo(new HashSet<>(db.query("SELECT id::text FROM events WHERE subject LIKE 'bulk-%'").stream()
                .map(row -> (String) row.get(0)).toList()));
        assertThat(outOfOrder).isEmpty();
    }

    private static long insert(Connection c, String subject, String occurredAt) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO events(type, subject, occurred_at)"
            + " VALUES ('order.created', ?, " + occurredAt + ") RETURNING seq")) {
            ps.setString(1, subject);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static boolean fannedOut(long seq) {
        return db.queryLong("SELECT count(*) FROM events WHERE seq = ? AND fanned_out_at IS NOT NULL", seq) == 1;
    }

    /** The JDBC-source-style incrementing reader: {@code WHERE seq > cursor}; returns the new cursor. */
    private static long readAfter(long cursor, List<Long> seen) {
        long next = cursor;
        for (List<Object> row : db.query("SELECT seq FROM events WHERE seq > ? ORDER BY seq", cursor)) {
            long seq = ((Number) row.get(0)).longValue();
            seen.add(seq);
            next = Math.max(next, seq);
        }
        return next;
    }
}
