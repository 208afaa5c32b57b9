package io.outboxrelay.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The application of the latency runs: commits one event per transaction on a fixed schedule (event
 * {@code i} is due at {@code start + i / rate}) for a fixed time, from a few connections so that one
 * slow commit does not delay the next. Each event's commit time is {@link System#nanoTime()} right
 * after its commit returned, the instant the application would consider it written.
 */
final class PacedWriter {
    static final int CONNECTIONS = 4;

    private final BenchPostgres.Db db;
    private final int rate;
    private final int count;
    private final long idBase;
    private final long[] commitNanos;
    private final long[] commitWallMs;
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong late = new AtomicLong();
    private volatile Throwable failure;
    private long startNanos;
    private long endNanos;

    PacedWriter(BenchPostgres.Db db, int rate, int seconds, long idBase) {
        this.db = db;
        this.rate = rate;
        this.count = rate * seconds;
        this.idBase = idBase;
        this.commitNanos = new long[count];
        this.commitWallMs = new long[count];
    }

    int count() {
        return count;
    }

    /** Runs the schedule to its end; returns when the last event is committed. */
    void run() throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        startNanos = System.nanoTime() + 20_000_000L;
        for (int t = 0; t < CONNECTIONS; t++) {
            Thread th = new Thread(this::writeLoop, "bench-writer-" + t);
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        endNanos = System.nanoTime();
        if (failure != null) {
            throw new IllegalStateException("the writer failed: " + failure.getMessage(), failure);
        }
    }

    private void writeLoop() {
        double intervalNanos = 1e9 / rate;
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(BenchEvents.INSERT_ONE_SQL)) {
            c.setAutoCommit(true);
            long i;
            while ((i = next.getAndIncrement()) < count && failure == null) {
                long due = startNanos + (long) (i * intervalNanos);
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                } else if (wait < -1_000_000L) {
                    late.incrementAndGet();
                }
                ps.setLong(1, idBase + i);
                ps.executeUpdate();
                commitNanos[(int) i] = System.nanoTime();
                commitWallMs[(int) i] = System.currentTimeMillis();
            }
        } catch (SQLException | RuntimeException e) {
            failure = e;
        }
    }

    long[] commitNanos() {
        return commitNanos;
    }

    long[] commitWallMs() {
        return commitWallMs;
    }

    /** Events committed more than 1 ms after their due time (the writer could not keep the rate). */
    long late() {
        return late.get();
    }

    /** Events per second actually committed. */
    double achievedRate() {
        return count / ((endNanos - startNanos) / 1e9);
    }
}
