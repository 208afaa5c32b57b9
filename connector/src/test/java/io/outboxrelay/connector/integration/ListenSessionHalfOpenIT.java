package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.CuttingProxy;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The relay's LISTEN session goes half-open (a firewall dropped the connection's state: nothing arrives and
 * nothing says so; TCP keepalive would notice after about two hours on Linux). Rows committed meanwhile
 * are relayed within a look (a quiet task's claim every 250 ms), not at the sweep (ten minutes here), and the
 * listener, asked to prove itself alive since the look found rows no NOTIFY told of, opens a new session within
 * seconds.
 */
class ListenSessionHalfOpenIT {
    private static final String CONNECTOR = "listen-half-open";

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void rowsCommittedWhileTheListenSessionIsHalfOpenAreRelayedWithinALookAndTheSessionIsReplaced() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("listen_half_open");
        try (CuttingProxy proxy = CuttingProxy.inFrontOf(db.jdbcUrl(), CuttingProxy.NOTHING)) {
            long frozen = quietWithItsListenSessionFrozen(db, proxy, "half-open-orders");
            db.insertEvent("order.created", "while-half-open", "{}"); // clears the flag; its NOTIFY is lost
            await().atMost(Duration.ofSeconds(3)).until(() -> stamped(db, "while-half-open"));
            await("a new LISTEN session in place of the frozen one").atMost(Duration.ofSeconds(20))
                .until(() -> db.queryLong("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND query ILIKE 'LISTEN%' AND pid <> ?", frozen) == 1);
        }
        assertThat(TestConnect.consume(1, Duration.ofSeconds(30), "half-open-orders"))
            .extracting(TestConnect.Received::key).containsExactly("while-half-open");
    }

    /**
     * An operator's requeue wakes the relay as an insert does (migration V11): a row put back in line while the only
     * task's LISTEN session is half-open is relayed within a look, not at the sweep. Before V11 a requeue sent a
     * NOTIFY alone (SchemaMigrationsIT.fromV11ARequeueTakesTheFlagDownAndCountsTheClear is the control).
     */
    @Test
    void aRowRequeuedWhileTheListenSessionIsHalfOpenIsRelayedWithinALook() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("listen_half_open_requeue");
        long poisoned = db.insertEvent("order.created", "requeued-while-half-open", "{}");
        db.query("UPDATE events SET poisoned_at = now(), last_error = 'by hand' WHERE seq = ? RETURNING seq", poisoned);
        try (CuttingProxy proxy = CuttingProxy.inFrontOf(db.jdbcUrl(), CuttingProxy.NOTHING)) {
            quietWithItsListenSessionFrozen(db, proxy, "half-open-requeued");
            assertThat(db.query("SELECT events_requeue(?)", poisoned)).containsExactly(List.of(true));
            await().atMost(Duration.ofSeconds(3)).until(() -> stamped(db, "requeued-while-half-open"));
        }
        assertThat(TestConnect.consume(1, Duration.ofSeconds(30), "half-open-requeued"))
            .extracting(TestConnect.Received::key).containsExactly("requeued-while-half-open");
    }

    /** The connector's one task, quiet (armed, and looking), and its LISTEN session frozen. */
    private static long quietWithItsListenSessionFrozen(TestDatabase db, CuttingProxy proxy, String topic) {
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("connection.url", proxy.through(db.jdbcUrl()));
        cfg.put("subscription.orders.topic", topic);
        cfg.put("outbox.sweep.interval.ms", "600000");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
        // quiet: the flag armed (only a quiet task arms it)
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT last_value FROM events_wakeup") == 1
            && db.queryLong("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                + " AND query ILIKE 'LISTEN%'") == 1);
        long frozen = db.queryLong("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            + " AND query ILIKE 'LISTEN%'");
        assertThat(proxy.freezeSessionsThatSent("LISTEN ")).as("the LISTEN session, and only it").isOne();
        return frozen;
    }

    private static boolean stamped(TestDatabase db, String subject) {
        return db.queryLong("SELECT count(*) FROM events WHERE subject = ? AND fanned_out_at IS NOT NULL", subject) == 1;
    }
}
