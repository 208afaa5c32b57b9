package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The operators' SQL of schemas/sql/outbox.sql on a real PostgreSQL: the pending and poisoned views show
 * what the runbook asks about, and the bulk requeue takes exactly the poisoned rows of matching type
 * poisoned in the range, returns their seqs and wakes the relay on its channel.
 */
class OperatorSqlIT {
    private static TestDatabase db;

    @BeforeAll
    static void createDatabase() {
        db = TestPostgres.get().createDatabase("operator_sql");
    }

    /** A row in the given state: occurred (and poisoned, when {@code poisonedAgo} is set) that long ago. */
    private static long row(String type, String subject, String occurredAgo, String poisonedAgo, boolean fanned) {
        return db.queryLong("INSERT INTO events(type, subject, occurred_at, attempts, last_error, poisoned_at,"
            + " fanned_out_at) VALUES (?, ?, now() - ?::interval, 3, CASE WHEN ?::interval IS NOT NULL THEN"
            + " 'boom: ' || ? END, now() - ?::interval, CASE WHEN ? THEN now() END) RETURNING seq",
            type, subject, occurredAgo, poisonedAgo, subject, poisonedAgo, fanned);
    }

    @Test
    void thePendingViewShowsWhatIsLeftWithAgeAndAttempts() {
        long pending = row("view.order", "view-pending", "1 hour", null, false);
        row("view.order", "view-fanned", "1 hour", null, true);
        row("view.order", "view-poisoned", "1 hour", "5 minutes", false);

        assertThat(db.query("SELECT seq, subject, attempts, extract(epoch FROM age) >= 3600, last_error IS NULL"
            + " FROM events_pending WHERE type = 'view.order'"))
            .containsExactly(List.of(pending, "view-pending", 3, true, true));
    }

    @Test
    void thePoisonedViewShowsTheReason() {
        row("reason.order", "reason-pending", "1 minute", null, false);
        long poisoned = row("reason.order", "reason-poisoned", "1 hour", "5 minutes", false);

        assertThat(db.query("SELECT seq, subject, attempts, reason, poisoned_at < now() - interval '4 minutes'"
            + " FROM events_poisoned WHERE type = 'reason.order'"))
            .containsExactly(List.of(poisoned, "reason-poisoned", 3, "boom: reason-poisoned", true));
    }

    @Test
    void theBulkRequeueTakesMatchingTypesPoisonedInTheRangeReturnsThemAndWakesTheRelay() throws Exception {
        long old = row("bulk.order.created", "old", "3 hours", "2 hours", false);
        long inRange = row("bulk.order.paid", "in-range", "1 hour", "30 minutes", false);
        long otherType = row("bulk.invoice.sent", "other-type", "1 hour", "30 minutes", false);
        long recent = row("bulk.order.created", "recent", "10 minutes", "5 minutes", false);
        row("bulk.order.paid", "pending", "1 hour", null, false);

        try (Connection listener = db.connect(); Statement s = listener.createStatement()) {
            s.execute("LISTEN outbox_events");
            PGConnection pg = listener.unwrap(PGConnection.class);
            pg.getNotifications(1); // whatever the inserts above sent

            assertThat(db.query("SELECT * FROM events_requeue_matching('bulk.order.%',"
                + " now() - interval '1 hour', now() - interval '10 minutes')")).containsExactly(List.of(inRange));
            assertThat(notifications(pg, 5_000)).as("the relay is woken").isNotEmpty();
            assertThat(db.query("SELECT poisoned_at IS NULL, attempts, last_error IS NULL FROM events WHERE seq = ?",
                inRange)).containsExactly(List.of(true, 0, true));
            assertThat(db.query("SELECT seq FROM events_pending WHERE seq = ?", inRange)).hasSize(1);

            // nothing left to take in that range: nothing returned, nobody woken
            assertThat(db.query("SELECT * FROM events_requeue_matching('bulk.order.%',"
                + " now() - interval '1 hour', now() - interval '10 minutes')")).isEmpty();
            assertThat(notifications(pg, 500)).isEmpty();

            // no bounds: every poisoned row of a matching type, in seq order
            assertThat(db.query("SELECT * FROM events_requeue_matching('bulk.%')"))
                .containsExactly(List.of(old), List.of(otherType), List.of(recent));
        }
        assertThat(db.queryLong("SELECT count(*) FROM events_poisoned WHERE type LIKE 'bulk.%'")).isZero();
    }

    private static PGNotification[] notifications(PGConnection pg, int timeoutMs) throws Exception {
        PGNotification[] got = pg.getNotifications(timeoutMs);
        return got == null ? new PGNotification[0] : got;
    }
}
