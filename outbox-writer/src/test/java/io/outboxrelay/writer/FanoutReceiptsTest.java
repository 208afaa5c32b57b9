package io.outboxrelay.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Receipts against a real PostgreSQL and a stand-in relay that stamps and notifies exactly as the
 * connector does. Guards the promise: a writer gets its receipt within 1 s of the fan-out when
 * nothing fails, still gets it (by the table fallback) when the notification never arrives, and is
 * never left hanging past its timeout. Tests that must prove the NOTIFY path use a 60 s fallback
 * interval, so only a notification can deliver within their bounds.
 */
class FanoutReceiptsTest {
    private static final Duration NO_FALLBACK = Duration.ofSeconds(60);
    private static final long ONE_SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static TestOutbox db;
    private final OutboxWriter writer = new OutboxWriter();

    @BeforeAll
    static void start() {
        db = TestOutbox.start();
    }

    @AfterAll
    static void stop() throws Exception {
        db.close();
    }

    private static FanoutReceipts.Builder receipts(Duration fallbackInterval) {
        return FanoutReceipts.builder(db.connections()).fallbackInterval(fallbackInterval);
    }

    @Test
    void aWriterGetsItsReceiptByNotifyWithinOneSecondOfTheStamp() throws Exception {
        try (FanoutReceipts receipts = receipts(NO_FALLBACK).start()) {
            RecordedEvent e = db.recordCommitted(writer, 1).get(0);
            CompletableFuture<Long> receivedAt = new CompletableFuture<>();
            CompletableFuture<Receipt> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    Receipt r = receipts.await(e.id(), Duration.ofSeconds(10));
                    receivedAt.complete(System.nanoTime());
                    return r;
                } catch (TimeoutException | InterruptedException ex) {
                    throw new IllegalStateException(ex);
                }
            });
            await().until(() -> receipts.pending() == 1);

            long stampedAt = System.nanoTime();
            assertThat(db.stamp(List.of(e))).isEqualTo(1);
            Receipt r = waiting.get(5, TimeUnit.SECONDS);

            assertThat(receivedAt.get() - stampedAt).as("nanos from stamp to receipt").isLessThan(ONE_SECOND_NANOS);
            assertThat(r.source()).isEqualTo(Receipt.Source.NOTIFY);
            assertThat(r.id()).isEqualTo(e.id());
            assertThat(r.fannedOutAt()).isEqualTo(fannedOutAt(e));
            assertThat(r.fanout()).contains("\"webhooks\"").contains("\"offset\": " + e.seq());
            assertThat(receipts.pending()).isZero();
        }
    }

    @Test
    void aReceiptThatArrivedBetweenCommitAndAwaitIsNotMissed() throws Exception {
        try (FanoutReceipts receipts = receipts(NO_FALLBACK).start()) {
            RecordedEvent e = db.recordCommitted(writer, 1).get(0);
            db.stamp(List.of(e));
            await().until(() -> receipts.notifiedRecently(e.id()));

            long t0 = System.nanoTime();
            Receipt r = receipts.await(e.id(), Duration.ofSeconds(5));
            assertThat(System.nanoTime() - t0).isLessThan(ONE_SECOND_NANOS);
            assertThat(r.source()).isEqualTo(Receipt.Source.NOTIFY);
        }
    }

    @Test
    void aLostNotificationIsCoveredByTheFallbackWithinItsInterval() throws Exception {
        Duration interval = Duration.ofMillis(200);
        try (FanoutReceipts receipts = receipts(interval).start()) {
            assertThat(receipts.listening()).isTrue();
            RecordedEvent e = db.recordCommitted(writer, 1).get(0);
            CompletableFuture<Receipt> f = receipts.expect(e.id(), Duration.ofSeconds(10));

            long stampedAt = System.nanoTime();
            assertThat(db.stamp("events", List.of(e), null)).as("no NOTIFY sent").isZero();
            Receipt r = f.get(5, TimeUnit.SECONDS);
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stampedAt);

            assertThat(r.source()).isEqualTo(Receipt.Source.FALLBACK);
            assertThat(r.fannedOutAt()).isEqualTo(fannedOutAt(e));
            assertThat(elapsedMs).as("ms from stamp to receipt").isLessThan(interval.toMillis() + 750);
        }
    }

    @Test
    void withoutListenEveryReceiptComesFromTheFallback() throws Exception {
        try (FanoutReceipts receipts = receipts(Duration.ofMillis(100)).listen(false).start()) {
            RecordedEvent e = db.recordCommitted(writer, 1).get(0);
            CompletableFuture<Receipt> f = receipts.expect(e.id(), Duration.ofSeconds(10));
            db.stamp(List.of(e));
            assertThat(f.get(5, TimeUnit.SECONDS).source()).isEqualTo(Receipt.Source.FALLBACK);
            assertThat(receipts.listening()).isFalse();
        }
    }

    @Test
    void aWaitForAnEventNeverFannedOutTimesOutBoundedAndLeavesNothingPending() throws Exception {
        try (FanoutReceipts receipts = receipts(Duration.ofMillis(50)).start()) {
            RecordedEvent e = db.recordCommitted(writer, 1).get(0);
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> receipts.await(e.id(), Duration.ofMillis(300)))
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining(e.id().toString())
                .hasMessageContaining("not stamped");
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(elapsedMs).isBetween(300L, 1_500L);

            CompletableFuture<Receipt> f = receipts.expect(e.id(), Duration.ofMillis(200));
            assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
            await().until(() -> receipts.pending() == 0);
        }
    }

    @Test
    void aNotificationForAnUnstampedRowIsNotAReceipt() throws Exception {
        try (FanoutReceipts receipts = receipts(NO_FALLBACK).start()) {
            RecordedEvent e = db.recordCommitted(writer, 1).get(0);
            CompletableFuture<Receipt> f = receipts.expect(e.id(), Duration.ofMillis(1_500));
            db.notifyOnly(FanoutReceipts.DEFAULT_CHANNEL, e.id().toString());
            await().until(() -> receipts.notifiedRecently(e.id()));
            assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(TimeoutException.class);
        }
    }

    @Test
    void fiveHundredConcurrentWaitersCompleteFromThreeChunkedNotifications() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(50);
        try (FanoutReceipts receipts = receipts(NO_FALLBACK).start()) {
            List<RecordedEvent> events = db.recordCommitted(writer, 500);
            List<Future<List<CompletableFuture<Receipt>>>> registrations = new ArrayList<>();
            for (int t = 0; t < 50; t++) {
                List<RecordedEvent> mine = events.subList(t * 10, t * 10 + 10);
                registrations.add(pool.submit(() -> {
                    List<CompletableFuture<Receipt>> out = new ArrayList<>();
                    for (RecordedEvent e : mine) {
                        out.add(receipts.expect(e.id(), Duration.ofSeconds(30)));
                    }
                    return out;
                }));
            }
            List<CompletableFuture<Receipt>> all = new ArrayList<>();
            for (Future<List<CompletableFuture<Receipt>>> r : registrations) {
                all.addAll(r.get());
            }
            assertThat(receipts.pending()).isEqualTo(500);

            assertThat(db.stamp(events)).as("notifications").isEqualTo(3);
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            for (int i = 0; i < all.size(); i++) {
                Receipt r = all.get(i).join();
                assertThat(r.id()).isEqualTo(events.get(i).id());
                assertThat(r.source()).isEqualTo(Receipt.Source.NOTIFY);
            }
            assertThat(receipts.pending()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void afterTheListeningSessionIsKilledItReconnectsAndMissedReceiptsAreStillFound() throws Exception {
        try (FanoutReceipts receipts = receipts(NO_FALLBACK).start()) {
            RecordedEvent missed = db.recordCommitted(writer, 1).get(0);
            CompletableFuture<Receipt> f = receipts.expect(missed.id(), Duration.ofSeconds(20));
            int pid = receipts.listenerBackendPid();
            assertThat(db.queryLong("SELECT count(*) FROM pg_terminate_backend(" + pid + ") t WHERE t")).isEqualTo(1);
            await().until(() -> !receipts.listening());
            db.stamp(List.of(missed)); // its notification is likely lost while the listener is down

            assertThat(f.get(10, TimeUnit.SECONDS).id()).as("found by the sweep after reconnecting").isEqualTo(missed.id());
            await().atMost(Duration.ofSeconds(10)).until(receipts::listening);
            assertThat(receipts.listenerBackendPid()).isNotEqualTo(pid);

            RecordedEvent next = db.recordCommitted(writer, 1).get(0);
            CompletableFuture<Receipt> g = receipts.expect(next.id(), Duration.ofSeconds(10));
            db.stamp(List.of(next));
            assertThat(g.get(5, TimeUnit.SECONDS).source()).isEqualTo(Receipt.Source.NOTIFY);
        }
    }

    @Test
    void aHostileTableAndChannelNameAreQuotedNotExecuted() throws Exception {
        String table = "fan\"; DROP TABLE events; --";
        String channel = "fanned\"; DROP TABLE events; --";
        String quoted = "\"" + table.replace("\"", "\"\"") + "\"";
        db.execute("CREATE TABLE " + quoted + " (LIKE events INCLUDING ALL)");
        try (FanoutReceipts receipts = receipts(NO_FALLBACK).table(table).channel(channel).start()) {
            OutboxWriter hostileWriter = new OutboxWriter(table);
            RecordedEvent e;
            try (Connection tx = db.connect()) {
                tx.setAutoCommit(false);
                e = hostileWriter.record(tx, "t", "s", "{}");
                tx.commit();
            }
            CompletableFuture<Receipt> f = receipts.expect(e.id(), Duration.ofSeconds(10));
            db.stamp(quoted, List.of(e), channel);
            assertThat(f.get(5, TimeUnit.SECONDS).source()).isEqualTo(Receipt.Source.NOTIFY);
        }
        assertThat(db.queryLong("SELECT count(*) FROM pg_class WHERE relname = 'events'")).isEqualTo(1);
    }

    @Test
    void closeEndsTheListenerAtOnceAndFailsPendingWaits() throws Exception {
        String channel = "close_test_fanned";
        FanoutReceipts receipts = receipts(NO_FALLBACK).channel(channel).start();
        int pid = receipts.listenerBackendPid();
        CompletableFuture<Receipt> f = receipts.expect(db.recordCommitted(writer, 1).get(0).id(), Duration.ofSeconds(30));

        long t0 = System.nanoTime();
        receipts.close();
        assertThat(System.nanoTime() - t0).as("close nanos").isLessThan(ONE_SECOND_NANOS);

        assertThatThrownBy(() -> f.get(1, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
        assertThat(receipts.listening()).isFalse();
        assertThat(Thread.getAllStackTraces().keySet())
            .noneMatch(t -> t.isAlive() && t.getName().equals("outbox-receipts-listener[" + channel + "]"));
        await().until(() -> db.queryLong("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) == 0);
        assertThatThrownBy(() -> receipts.expect(UUID.randomUUID(), Duration.ofSeconds(1)))
            .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void startFailsFastOnWrongSettingsInsteadOfTimingOutLater() throws Exception {
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        ConnectionSource wrong = ConnectionSource.of("jdbc:postgresql://localhost:" + port() + "/no_such_db", props);
        assertThatThrownBy(() -> FanoutReceipts.builder(wrong).start())
            .isInstanceOf(SQLException.class)
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("3D000"));
    }

    private static int port() throws SQLException {
        return (int) db.queryLong("SELECT setting::int FROM pg_settings WHERE name = 'port'");
    }

    private static Instant fannedOutAt(RecordedEvent e) throws SQLException {
        try (Connection c = db.connect();
             PreparedStatement ps = c.prepareStatement("SELECT fanned_out_at FROM events WHERE id = ?")) {
            ps.setObject(1, e.id());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getObject(1, OffsetDateTime.class).toInstant();
            }
        }
    }
}
