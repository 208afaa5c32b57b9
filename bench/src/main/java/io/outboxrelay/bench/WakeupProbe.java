package io.outboxrelay.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The floor under the relay's latency: how late a NOTIFY reaches a LISTENing JDBC session on the same
 * database, with no relay, no Kafka and no Connect. One connection commits one {@code pg_notify} per
 * transaction at a fixed rate (as the latency writer commits one event per transaction, each of which
 * fires the outbox trigger's NOTIFY); another LISTENs exactly as the relay's listener does
 * ({@code getNotifications(500)} in a loop). Latency is receive time minus the sender's time just before
 * it sent the commit; the relay cannot wake earlier than this.
 */
final class WakeupProbe {
    private static final String CHANNEL = "bench_wakeup_probe";

    private WakeupProbe() {
    }

    static Results.Latency run(Bench b, int rate, int seconds) throws Exception {
        BenchDatabases.Db db = b.postgres.createDatabase("wakeup");
        int count = rate * seconds;
        long[] sent = new long[count];
        long[] received = new long[count];
        try (Connection listen = db.connect(); Connection send = db.connect()) {
            try (Statement st = listen.createStatement()) {
                st.execute("LISTEN " + CHANNEL);
            }
            PGConnection pg = listen.unwrap(PGConnection.class);
            Thread listener = new Thread(() -> {
                int seen = 0;
                try {
                    while (seen < count && !Thread.currentThread().isInterrupted()) {
                        PGNotification[] batch = pg.getNotifications(500);
                        long now = System.nanoTime();
                        if (batch != null) {
                            for (PGNotification n : batch) {
                                received[Integer.parseInt(n.getParameter())] = now;
                                seen++;
                            }
                        }
                    }
                } catch (SQLException e) {
                    b.log("  wake-up probe listener stopped: %s", e.getMessage());
                }
            }, "bench-wakeup-listener");
            listener.start();
            CpuMeter.Sample cpu0 = b.cpu.sample();
            long start = System.nanoTime() + 20_000_000L;
            double interval = 1e9 / rate;
            try (PreparedStatement ps = send.prepareStatement("SELECT pg_notify('" + CHANNEL + "', ?)")) {
                for (int i = 0; i < count; i++) {
                    long wait = start + (long) (i * interval) - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    ps.setString(1, Integer.toString(i));
                    sent[i] = System.nanoTime();
                    ps.executeQuery().close();
                }
            }
            listener.join(10_000);
            listener.interrupt();
            CpuMeter.Sample used = b.cpu.sample().minus(cpu0);
            long[] lat = new long[count];
            int n = 0;
            double sum = 0;
            for (int i = 0; i < count; i++) {
                if (received[i] != 0) {
                    lat[n] = Math.max(0, received[i] - sent[i]);
                    sum += lat[n++];
                }
            }
            lat = Arrays.copyOf(lat, n);
            Arrays.sort(lat);
            double elapsed = (sent[count - 1] - sent[0]) / 1e9;
            Results.Latency r = new Results.Latency("raw LISTEN/NOTIFY wake-up (no relay)", "probe", "", 1, rate, 0,
                seconds, count, n, Results.round1(elapsed > 0 ? (count - 1) / elapsed : rate), 0, LatencyPhase.ms(lat, 0.50),
                LatencyPhase.ms(lat, 0.95), LatencyPhase.ms(lat, 0.99), LatencyPhase.ms(lat, 0.999),
                n == 0 ? Double.NaN : Results.round2(lat[n - 1] / 1e6), n == 0 ? Double.NaN : Results.round2(sum / n / 1e6),
                Double.NaN, Double.NaN, LatencyPhase.cdf(lat), Results.Cpu.of(used, count));
            b.log("  %-34s %,6d/s for %d s: p50 %.1f ms, p95 %.1f, p99 %.1f, max %.1f (%,d of %,d received)",
                r.label(), rate, seconds, r.p50Ms(), r.p95Ms(), r.p99Ms(), r.maxMs(), n, count);
            return r;
        } finally {
            b.postgres.dropDatabase(db);
        }
    }
}
