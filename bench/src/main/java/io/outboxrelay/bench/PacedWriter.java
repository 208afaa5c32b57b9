package io.outboxrelay.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The application of the latency runs: commits one event per transaction on a fixed schedule (event
 * {@code i} is due at {@code start + i / rate}) for a fixed time, from a few connections so that one
 * slow commit does not delay the next. Each event's commit time is {@link System#nanoTime()} right
 * after its commit returned, the instant the application would consider it written.
 *
 * <p>With {@code stopAtScheduleEnd} the writers give up the events still uncommitted shortly after the
 * schedule's end (they could not keep the rate): the run lasts the schedule's time whatever the rate, and
 * {@link #achievedRate(int)} says how much of it they committed.
 *
 * <p>Each transaction is one autocommit statement, {@link Transaction}: by default the one-event INSERT of every
 * phase; the steady phase also runs one that updates other rows in the same commit.
 */
final class PacedWriter {
    /** What one application transaction runs: one statement (autocommit), with event {@code id} bound to it. */
    interface Transaction {
        String sql();

        void bind(PreparedStatement ps, long id) throws SQLException;
    }

    /** One event per transaction: {@link BenchEvents#INSERT_ONE_SQL}. */
    static final Transaction ONE_EVENT = oneEvent(BenchEvents.INSERT_ONE_SQL);

    /** One event per transaction, by {@code sql}, whose one parameter is the event's id. */
    static Transaction oneEvent(String sql) {
        return new Transaction() {
            @Override
            public String sql() {
                return sql;
            }

            @Override
            public void bind(PreparedStatement ps, long id) throws SQLException {
                ps.setLong(1, id);
            }
        };
    }

    /** The latency phase's writer connections. */
    static final int CONNECTIONS = 4;
    /** How long after the schedule's end writers that fell behind may still commit (stopAtScheduleEnd). */
    private static final long GRACE_NANOS = 250_000_000L;

    private final BenchDatabases.Db db;
    private final int rate;
    private final int count;
    private final long idBase;
    private final int connections;
    private final boolean stopAtScheduleEnd;
    private final Transaction transaction;
    private final long[] commitNanos;
    private final long[] commitWallMs;
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong late = new AtomicLong();
    private final AtomicLong committed = new AtomicLong();
    private volatile Throwable failure;
    private long startNanos;
    private long deadlineNanos;
    private long endNanos;
    private long windowStartNanos;
    private long windowEndNanos;

    /** The latency phase's writer: {@link #CONNECTIONS} connections, every event committed however late. */
    PacedWriter(BenchDatabases.Db db, int rate, int seconds, long idBase) {
        this(db, rate, seconds, idBase, CONNECTIONS, false);
    }

    PacedWriter(BenchDatabases.Db db, int rate, int seconds, long idBase, int connections, boolean stopAtScheduleEnd) {
        this(db, rate, seconds, idBase, connections, stopAtScheduleEnd, ONE_EVENT);
    }

    PacedWriter(BenchDatabases.Db db, int rate, int seconds, long idBase, int connections, boolean stopAtScheduleEnd,
                Transaction transaction) {
        this.db = db;
        this.transaction = transaction;
        this.rate = rate;
        this.count = rate * seconds;
        this.idBase = idBase;
        this.connections = connections;
        this.stopAtScheduleEnd = stopAtScheduleEnd;
        this.commitNanos = new long[count];
        this.commitWallMs = new long[count];
    }

    int count() {
        return count;
    }

    int connections() {
        return connections;
    }

    int rate() {
        return rate;
    }

    /** The benchmark id of event 0. */
    long firstId() {
        return idBase;
    }

    /** Runs the schedule to its end; returns when the last event is committed (or given up). */
    void run() throws InterruptedException {
        run(0, () -> { }, () -> { });
    }

    /**
     * Runs the schedule to its end, and on the calling thread runs {@code atWindowStart} at event {@code from}'s due
     * time and {@code atWindowEnd} at the schedule's end: the window whose commits {@link #windowCommits()} counts.
     */
    void run(int from, Runnable atWindowStart, Runnable atWindowEnd) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        startNanos = System.nanoTime() + 20_000_000L;
        long scheduleEnd = dueNanos(count);
        deadlineNanos = stopAtScheduleEnd ? scheduleEnd + GRACE_NANOS : Long.MAX_VALUE;
        for (int t = 0; t < connections; t++) {
            Thread th = new Thread(this::writeLoop, "bench-writer-" + t);
            threads.add(th);
            th.start();
        }
        parkUntil(dueNanos(from));
        windowStartNanos = System.nanoTime();
        atWindowStart.run();
        parkUntil(scheduleEnd);
        windowEndNanos = System.nanoTime();
        try {
            atWindowEnd.run();
        } finally {
            windowEnded.countDown();
        }
        for (Thread th : threads) {
            th.join();
        }
        endNanos = System.nanoTime();
        if (failure != null) {
            throw new IllegalStateException("the writer failed: " + failure.getMessage(), failure);
        }
    }

    private long dueNanos(long i) {
        return startNanos + (long) (i * 1e9 / rate);
    }

    private static void parkUntil(long nanos) {
        for (long wait; (wait = nanos - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(wait);
        }
    }

    /** How long a writer that is done keeps its session open for the window's end to be read. */
    private static final long WINDOW_END_WAIT_SECONDS = 120;
    /** Counted down once the window's end was read (or there is none to read). */
    private final CountDownLatch windowEnded = new CountDownLatch(1);

    private void writeLoop() {
        double intervalNanos = 1e9 / rate;
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(transaction.sql())) {
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
                if (System.nanoTime() > deadlineNanos) {
                    return;
                }
                transaction.bind(ps, idBase + i);
                ps.execute();
                commitNanos[(int) i] = System.nanoTime();
                commitWallMs[(int) i] = System.currentTimeMillis();
                committed.incrementAndGet();
            }
            // the session stays open until the window's end is read: a backend that exits before is only in what the
            // server reaped, which cannot say whose it was (PostgresSessions)
            if (!windowEnded.await(WINDOW_END_WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the window did not end within " + WINDOW_END_WAIT_SECONDS + " s");
            }
        } catch (SQLException | RuntimeException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Commit time of event {@code i} ({@link System#nanoTime()}), 0 when it was given up. Read after run(). */
    long[] commitNanos() {
        return commitNanos;
    }

    long[] commitWallMs() {
        return commitWallMs;
    }

    /** Events committed (all of them, unless stopAtScheduleEnd gave some up). */
    long committed() {
        return committed.get();
    }

    /** Events committed more than 1 ms after their due time (the writer could not keep the rate). */
    long late() {
        return late.get();
    }

    /**
     * Commits per second from event {@code from}'s due time (the end of a warm-up) until the writers stopped: every
     * commit in that window, so writers that lag and are still committing warm-up events get them counted.
     */
    double achievedRate(int from) {
        return commitsPerSecond(commitNanos, dueNanos(from), endNanos);
    }

    /** Commits inside the window of {@link #run(int, Runnable, Runnable)}: from its start to the schedule's end. */
    long windowCommits() {
        return commitsBetween(commitNanos, windowStartNanos, windowEndNanos);
    }

    /** The window's length in seconds. */
    double windowSeconds() {
        return (windowEndNanos - windowStartNanos) / 1e9;
    }

    /** Commit times in {@code [fromNanos, toNanos)}. */
    static long commitsBetween(long[] commitNanos, long fromNanos, long toNanos) {
        long n = 0;
        for (long t : commitNanos) {
            if (t != 0 && t >= fromNanos && t < toNanos) {
                n++;
            }
        }
        return n;
    }

    /** Commits (non-zero commit times) at or after {@code fromNanos}, per second until {@code toNanos}. */
    static double commitsPerSecond(long[] commitNanos, long fromNanos, long toNanos) {
        long n = 0;
        for (long t : commitNanos) {
            if (t != 0 && t >= fromNanos) {
                n++;
            }
        }
        return n / ((toNanos - fromNanos) / 1e9);
    }
}
