package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Retention deletes only old fanned rows; the backlog gauges read the claim's partial index. */
class RelayMaintenanceIT {
    /** A start far enough back that the first run is due at once. */
    private static final long STARTED = -RelayMaintenance.FIRST_BACKLOG_DELAY_MS;

    private static TestDatabase db;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        db = TestPostgres.get().createDatabase("maintenance");
        pool = db.pool("maintenance-it", 2);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    private static OutboxStore store() {
        return new JdbcOutboxStore(pool, "events", "\"events\"", "maintenance-0", "1", 1, 0, 60_000, "", null);
    }

    @Test
    void retentionDeletesOnlyOldFannedRowsAndTheBacklogCountsWaitingRows() {
        db.execute("TRUNCATE events RESTART IDENTITY");
        db.insertEvents(2_500, 10, "t.a"); // seq 1..2500
        db.execute("UPDATE events SET fanned_out_at = now() - interval '2 hours', fanout = '{}' WHERE seq <= 2200");
        db.execute("UPDATE events SET fanned_out_at = now() WHERE seq > 2200 AND seq <= 2300");      // fanned, young
        db.execute("UPDATE events SET poisoned_at = now() - interval '2 hours', occurred_at = now() - interval '3 hours'"
            + " WHERE seq > 2300 AND seq <= 2310");                                               // poisoned, old
        db.execute("UPDATE events SET occurred_at = now() - interval '5 hours' WHERE seq > 2310"); // waiting, old

        RelayMetrics metrics = new RelayMetrics();
        RelayMaintenance maintenance = new RelayMaintenance(store(), 3_600_000, 60_000, true, metrics, STARTED,
            Runnable::run);
        maintenance.run(0);             // first batch of 1000, and the backlog
        maintenance.run(1);             // a full batch: continues at once
        maintenance.run(2);
        maintenance.run(3);             // nothing left older than an hour

        assertThat(metrics.value("rows-retained-deleted-total")).isEqualTo(2_200);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE seq <= 2200")).isZero();
        assertThat(db.queryLong("SELECT count(*) FROM events")).isEqualTo(300);
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL")).isEqualTo(10);
        assertThat(metrics.backlog.get()).isEqualTo(190);
        assertThat(metrics.oldestAgeMs.get()).isGreaterThan(4 * 3_600_000L);
    }

    @Test
    void aFailingRetentionDeleteIsLoggedAndRetriedAtItsIntervalWithoutFailingThePass() {
        db.execute("TRUNCATE events");
        db.insertEvents(10, 1, "t.a");
        db.execute("UPDATE events SET fanned_out_at = now() - interval '2 hours', fanout = '{}'");
        // a statement timeout on a big table, as a test trigger: every DELETE fails until it is dropped
        db.execute("""
            CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
            BEGIN
              RAISE EXCEPTION 'test: canceling statement due to statement timeout' USING ERRCODE = '57014';
            END;
            $fn$;
            CREATE TRIGGER refuse_delete BEFORE DELETE ON events FOR EACH STATEMENT EXECUTE FUNCTION refuse_delete();
            """);
        try {
            RelayMetrics metrics = new RelayMetrics();
            RelayMaintenance maintenance = new RelayMaintenance(store(), 3_600_000, 60_000, true, metrics, STARTED,
                Runnable::run);
            maintenance.run(0); // must not throw: the pass that called it goes on to claim and stamp
            assertThat(db.queryLong("SELECT count(*) FROM events")).isEqualTo(10);

            db.execute("DROP TRIGGER refuse_delete ON events");
            maintenance.run(59_999);
            assertThat(db.queryLong("SELECT count(*) FROM events")).as("not before its interval").isEqualTo(10);
            maintenance.run(60_000);
            assertThat(db.queryLong("SELECT count(*) FROM events")).isZero();
        } finally {
            db.execute("DROP TRIGGER IF EXISTS refuse_delete ON events; DROP FUNCTION IF EXISTS refuse_delete()");
        }
    }

    @Test
    void theFirstProbeAndRetentionWaitASecondAfterTheStartSoTheFirstClaimDoesNotWaitForThem() {
        db.execute("TRUNCATE events");
        db.insertEvents(10, 1, "t.a");
        db.execute("UPDATE events SET fanned_out_at = now() - interval '2 hours', fanout = '{}'"
            + " WHERE seq IN (SELECT seq FROM events ORDER BY seq LIMIT 4)");
        RelayMetrics metrics = new RelayMetrics();
        RelayMaintenance maintenance = new RelayMaintenance(store(), 3_600_000, 60_000, true, metrics, 5_000,
            Runnable::run);
        maintenance.run(5_999);
        assertThat(metrics.backlog.get()).as("not read yet").isEqualTo(-1);
        assertThat(db.queryLong("SELECT count(*) FROM events")).as("nothing deleted yet").isEqualTo(10);
        maintenance.run(6_000);
        assertThat(metrics.backlog.get()).isEqualTo(6);
        assertThat(db.queryLong("SELECT count(*) FROM events")).isEqualTo(6);
    }

    @Test
    void aTaskOtherThanTheFirstNeitherDeletesNorReadsTheBacklog() {
        db.execute("TRUNCATE events");
        db.insertEvents(10, 1, "t.a");
        db.execute("UPDATE events SET fanned_out_at = now() - interval '2 hours', fanout = '{}'");
        RelayMetrics metrics = new RelayMetrics();
        new RelayMaintenance(store(), 60_000, 60_000, false, metrics, STARTED, Runnable::run).run(0);
        assertThat(db.queryLong("SELECT count(*) FROM events")).isEqualTo(10);
        assertThat(metrics.backlog.get()).as("not read: task 0 publishes the table-wide gauges").isEqualTo(-1);
    }
}
