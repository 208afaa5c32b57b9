package io.outboxrelay.connector.faults;

import io.outboxrelay.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A steady stream of outbox events from a background thread: {@code eventsPerSecond} spread over ten
 * small transactions a second, each event of one of {@link FaultScenarios#TYPES} about one of
 * {@code subjects} subjects. It keeps going through database outages (it reconnects), because an
 * application in front of the outbox does too; what it committed is read back from the table by the
 * checker, not taken from its counters.
 */
final class LoadGenerator implements AutoCloseable {
    private static final String INSERT = "INSERT INTO events(type, subject, payload) "
        + "SELECT (?::text[])[1 + ((g + ?) % ?)], 'subject-' || ((g + ?) % ?), jsonb_build_object('n', g + ?) "
        + "FROM generate_series(0, ? - 1) g";

    private final TestDatabase db;
    private final int perTick;
    private final int subjects;
    private final Thread thread;
    private final AtomicLong inserted = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile boolean running = true;

    LoadGenerator(TestDatabase db, int eventsPerSecond, int subjects) {
        this.db = db;
        this.perTick = Math.max(1, eventsPerSecond / 10);
        this.subjects = subjects;
        this.thread = new Thread(this::run, "outbox-load");
        this.thread.setDaemon(true);
    }

    LoadGenerator start() {
        thread.start();
        return this;
    }

    long inserted() {
        return inserted.get();
    }

    long failures() {
        return failures.get();
    }

    private void run() {
        long next = System.nanoTime();
        Connection c = null;
        while (running) {
            next += 100_000_000L;
            try {
                if (c == null) {
                    c = db.connect();
                }
                try (PreparedStatement ps = c.prepareStatement(INSERT)) {
                    long n = inserted.get();
                    ps.setArray(1, c.createArrayOf("text", FaultScenarios.TYPES.toArray()));
                    ps.setLong(2, n);
                    ps.setInt(3, FaultScenarios.TYPES.size());
                    ps.setLong(4, n);
                    ps.setInt(5, subjects);
                    ps.setLong(6, n);
                    ps.setInt(7, perTick);
                    inserted.addAndGet(ps.executeUpdate());
                }
            } catch (SQLException e) {
                failures.incrementAndGet();
                closeQuietly(c);
                c = null;
            }
            long sleepNanos = next - System.nanoTime();
            if (sleepNanos > 0) {
                try {
                    Thread.sleep(sleepNanos / 1_000_000, (int) (sleepNanos % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            } else {
                next = System.nanoTime(); // fell behind (an outage): do not try to catch up in a burst
            }
        }
        closeQuietly(c);
    }

    private static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already broken
            }
        }
    }

    @Override
    public void close() {
        running = false; // no interrupt: it would land inside a JDBC call
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
