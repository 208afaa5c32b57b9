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
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Guards the connector's reason to exist: {@code seq} is assigned at INSERT but transactions commit in
 * any order, so a reader that advances a {@code seq > cursor} high-water mark silently loses the row that
 * commits late. The relay claims by state, so the late row is still delivered.
 */
class LateCommitIsNeverSkippedIT {
    private static final String CONNECTOR = "late-commit";
    private static final String TOPIC = "late-commit-events";
    private static TestDatabase db;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("late_commit");
        Map<String, String> cfg = TestConnect.relayConfig(db, "late", 1);
        cfg.put("subscription.late.topic", TOPIC);
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
    }

    @AfterAll
    static void stop() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void aLowerSeqThatCommitsAfterAHigherOneIsStillDelivered() throws Exception {
        CursorReader cursorReader = new CursorReader();
        try (Connection early = db.connect(); Connection late = db.connect()) {
            late.setAutoCommit(false);
            long lateSeq = insert(late, "order.created", "order-1");   // lower seq, commits last
            long earlySeq = insert(early, "order.created", "order-2"); // higher seq, autocommit
            assertThat(lateSeq).isLessThan(earlySeq);

            await().atMost(Duration.ofSeconds(30)).until(() -> fannedOut(earlySeq));
            cursorReader.readNewRows(); // the cursor reader sees the higher seq and moves past the lower one

            late.commit();
            await().atMost(Duration.ofSeconds(30)).until(() -> fannedOut(lateSeq));
            cursorReader.readNewRows();

            List<Long> delivered = TestConnect.consume(2, Duration.ofSeconds(30), TOPIC).stream()
                .map(TestConnect.Received::seq).toList();
            assertThat(delivered).containsExactlyInAnyOrder(lateSeq, earlySeq);

            // negative control: the cursor design over the same history never sees the late row
            assertThat(cursorReader.seen).contains(earlySeq).doesNotContain(lateSeq);
        }
    }

    private static long insert(Connection c, String type, String subject) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
            "INSERT INTO events(type, subject) VALUES (?, ?) RETURNING seq")) {
            ps.setString(1, type);
            ps.setString(2, subject);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static boolean fannedOut(long seq) {
        return db.queryLong("SELECT count(*) FROM events WHERE seq = ? AND fanned_out_at IS NOT NULL", seq) == 1;
    }

    /** The JDBC-source-style incrementing reader: {@code WHERE seq > cursor}, cursor = highest seq seen. */
    private static final class CursorReader {
        long cursor;
        final List<Long> seen = new ArrayList<>();

        void readNewRows() {
            for (List<Object> row : db.query("SELECT seq FROM events WHERE seq > ? ORDER BY seq", cursor)) {
                long seq = ((Number) row.get(0)).longValue();
                seen.add(seq);
                cursor = Math.max(cursor, seq);
            }
        }
    }
}
