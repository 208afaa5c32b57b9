package io.outboxrelay.quickstart;

import io.outboxrelay.writer.OutboxWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The application side of the outbox, as a demo: a shop whose orders move created → paid → shipped
 * and whose customers get updated. Every transaction changes {@code demo_orders} and records the
 * matching events with {@link OutboxWriter} in the same transaction, so an event exists exactly when
 * its change commits. Some orders check out instantly (all three events in one transaction), which
 * gives the coalescing subscription something to coalesce.
 */
final class DemoEventWriter {
    static final String DDL = """
        CREATE TABLE IF NOT EXISTS demo_orders (
          id          BIGINT PRIMARY KEY,
          customer_id INT NOT NULL,
          status      TEXT NOT NULL,
          updated_at  TIMESTAMPTZ NOT NULL DEFAULT now())""";
    private static final String UPSERT_ORDER = """
        INSERT INTO demo_orders (id, customer_id, status) VALUES (?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = now()""";
    private static final int TRANSACTIONS_PER_SECOND = 20;
    private static final int CUSTOMERS = 20;
    private static final String[] NEXT = {"created", "paid", "shipped"};

    private final QuickstartDatabase db;
    private final int eventsPerSecond;
    private final OutboxWriter outbox = new OutboxWriter();
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong transactions = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final Deque<long[]> openOrders = new ArrayDeque<>(); // {order id, customer id, step done}
    private volatile boolean running = true;
    private volatile String lastError;
    private long nextOrderId = 1000;
    private Thread thread;

    DemoEventWriter(QuickstartDatabase db, int eventsPerSecond) {
        this.db = db;
        this.eventsPerSecond = eventsPerSecond;
    }

    void start() throws SQLException {
        db.execute(DDL);
        thread = new Thread(this::run, "quickstart-writer");
        thread.setDaemon(true);
        thread.start();
    }

    long written() {
        return written.get();
    }

    long transactions() {
        return transactions.get();
    }

    long failures() {
        return failures.get();
    }

    String lastError() {
        return lastError;
    }

    private void run() {
        long periodNanos = TimeUnit.SECONDS.toNanos(1) / TRANSACTIONS_PER_SECOND;
        long next = System.nanoTime();
        double owed = 0;
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            while (running) {
                owed += (double) eventsPerSecond / TRANSACTIONS_PER_SECOND;
                int events = (int) owed;
                owed -= events;
                if (events > 0) {
                    writeOneTransaction(tx, events);
                }
                next += periodNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                } else if (wait < -TimeUnit.SECONDS.toNanos(1)) {
                    next = System.nanoTime(); // fell behind (slow database): do not burst to catch up
                }
            }
        } catch (SQLException e) {
            lastError = e.getMessage();
        }
    }

    private void writeOneTransaction(Connection tx, int events) {
        Map<String, String> headers = Map.of("traceparent", traceparent());
        int done = 0;
        try (PreparedStatement upsert = tx.prepareStatement(UPSERT_ORDER)) {
            while (done < events) {
                done += writeOne(tx, upsert, headers, events - done);
            }
            tx.commit();
            written.addAndGet(done);
            transactions.incrementAndGet();
        } catch (SQLException e) {
            failures.incrementAndGet();
            lastError = e.getMessage();
            try {
                tx.rollback();
            } catch (SQLException ignored) {
                // the connection is gone; the next commit fails too and is counted
            }
        }
    }

    /** Writes one business change and its events (at most {@code budget}); returns the events written. */
    private int writeOne(Connection tx, PreparedStatement upsert, Map<String, String> headers, int budget)
        throws SQLException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        if (random.nextInt(10) < 2) {
            int customer = 1 + random.nextInt(CUSTOMERS);
            outbox.record(tx, "customer.updated", "customer:" + customer,
                "{\"customer_id\":" + customer + ",\"tier\":\"" + (random.nextBoolean() ? "gold" : "silver") + "\"}",
                headers);
            return 1;
        }
        if (budget >= 3 && random.nextInt(10) == 0) {
            long order = nextOrderId++;
            int customer = 1 + random.nextInt(CUSTOMERS);
            for (String step : NEXT) { // instant checkout: created, paid and shipped together
                orderEvent(tx, upsert, headers, order, customer, step);
            }
            return 3;
        }
        if (openOrders.size() < 50 && (openOrders.isEmpty() || random.nextInt(3) == 0)) {
            long order = nextOrderId++;
            int customer = 1 + random.nextInt(CUSTOMERS);
            orderEvent(tx, upsert, headers, order, customer, NEXT[0]);
            openOrders.addLast(new long[] {order, customer, 0});
            return 1;
        }
        long[] open = openOrders.pollFirst();
        int step = (int) open[2] + 1;
        orderEvent(tx, upsert, headers, open[0], (int) open[1], NEXT[step]);
        if (step < NEXT.length - 1) {
            open[2] = step;
            openOrders.addLast(open);
        }
        return 1;
    }

    private void orderEvent(Connection tx, PreparedStatement upsert, Map<String, String> headers, long order,
                            int customer, String status) throws SQLException {
        upsert.setLong(1, order);
        upsert.setInt(2, customer);
        upsert.setString(3, status);
        upsert.executeUpdate();
        outbox.record(tx, "order." + status, "order:" + order, "{\"order_id\":" + order + ",\"customer_id\":"
            + customer + ",\"status\":\"" + status + "\",\"amount_cents\":" + (1000 + order % 9000) + "}", headers);
    }

    private static String traceparent() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return String.format("00-%016x%016x-%016x-01", r.nextLong(), r.nextLong(), r.nextLong());
    }

    /** Stops writing; the transaction in progress commits or rolls back first. */
    void stop() throws InterruptedException {
        running = false;
        if (thread != null) {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }
    }
}
