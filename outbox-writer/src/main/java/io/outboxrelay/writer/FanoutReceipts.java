package io.outboxrelay.writer;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Awaits fan-out receipts: the moment the relay has delivered an event to every matching subscriber
 * and stamped its row. The relay announces stamps on the receipt channel ({@code outbox.fanned.channel},
 * default {@code outbox_events_fanned}); one listening session per instance serves any number of
 * waiters. A notification is only a hint: the receipt is always read back from the row. Every pending
 * wait is also re-read from the table once per fallback interval (default 250 ms), so a lost
 * notification (listener reconnecting, relay receipts disabled) costs at most about one interval,
 * never a hung writer; the caller's timeout bounds every wait.
 *
 * <p>Awaiting after commit is safe: an event fanned out between the caller's commit and its
 * {@code await} is found among the recently notified ids (or else by the fallback). Create one
 * instance per application and close it on shutdown; it runs three daemon threads,
 * {@code outbox-receipts-listener}, {@code outbox-receipts-fallback} and {@code outbox-receipts-timeouts}.
 *
 * <pre>{@code
 * try (FanoutReceipts receipts = FanoutReceipts.builder(ConnectionSource.of(url, props)).start()) {
 *     Receipt r = receipts.await(event.id(), Duration.ofSeconds(5));
 * }
 * }</pre>
 */
public final class FanoutReceipts implements AutoCloseable {
    /** The relay's default {@code outbox.fanned.channel}. */
    public static final String DEFAULT_CHANNEL = "outbox_events_fanned";
    public static final Duration DEFAULT_FALLBACK_INTERVAL = Duration.ofMillis(250);

    private final ReceiptWaiters waiters;
    private final ReceiptListener listener;
    private final FallbackChecker fallback;
    private final Thread listenerThread;
    private final Thread fallbackThread;
    private final ScheduledThreadPoolExecutor timeouts;
    private final Executor callbackExecutor;
    private volatile boolean closed;

    private FanoutReceipts(Builder b) throws SQLException {
        ReceiptReader reader = new ReceiptReader(b.table);
        this.waiters = new ReceiptWaiters(b.fallbackInterval.toNanos());
        this.callbackExecutor = b.callbackExecutor;
        this.fallback = new FallbackChecker(b.fallbackConnections == null ? b.connections : b.fallbackConnections,
            reader, waiters);
        this.fallbackThread = daemon(fallback, "outbox-receipts-fallback[" + b.table + "]");
        this.timeouts = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "outbox-receipts-timeouts"));
        timeouts.setRemoveOnCancelPolicy(true); // a receipt that arrives drops its timeout task at once
        if (b.listen) {
            this.listener = new ReceiptListener(b.connections, b.channel, reader, waiters);
            try {
                listener.connect();
            } catch (SQLException | RuntimeException e) {
                timeouts.shutdownNow();
                throw e;
            }
            this.listenerThread = daemon(listener, "outbox-receipts-listener[" + b.channel + "]");
            listenerThread.start();
        } else {
            this.listener = null;
            this.listenerThread = null;
        }
        fallbackThread.start();
    }

    /**
     * A builder whose listening session (and, unless {@link Builder#fallbackConnections} says otherwise,
     * whose fallback reads) come from {@code connections}.
     */
    public static Builder builder(ConnectionSource connections) {
        return new Builder(connections);
    }

    /**
     * Registers interest in event {@code id} and returns a future completed with its receipt, or
     * exceptionally with a {@link TimeoutException} once {@code timeout} has passed. May be called
     * before the event's transaction commits; if that transaction rolls back, cancel the future (or let
     * it time out). Cancelling withdraws the interest. The future is completed through the callback
     * executor (default: the common pool), never on the listener thread.
     */
    public CompletableFuture<Receipt> expect(UUID id, Duration timeout) {
        long timeoutMs = checkArgs(id, timeout);
        CompletableFuture<Receipt> future = waiters.register(id, callbackExecutor);
        try {
            ScheduledFuture<?> expiry = timeouts.schedule(() -> expire(future, id, timeoutMs),
                timeoutMs, TimeUnit.MILLISECONDS);
            future.whenComplete((r, e) -> expiry.cancel(false));
        } catch (RejectedExecutionException e) {
            future.completeExceptionally(new IllegalStateException("FanoutReceipts is closed", e));
        }
        return future;
    }

    /**
     * Blocks until event {@code id} is fanned out and returns its receipt.
     *
     * @throws TimeoutException      when no receipt arrived within {@code timeout}: the row is not stamped
     *                               yet (relay behind or stopped, row poisoned, or never committed)
     * @throws InterruptedException  when interrupted; the interest is withdrawn
     * @throws IllegalStateException when this instance is or gets closed
     */
    public Receipt await(UUID id, Duration timeout) throws TimeoutException, InterruptedException {
        long timeoutMs = checkArgs(id, timeout);
        CompletableFuture<Receipt> future = waiters.register(id, null);
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            if (!future.cancel(false) && future.isDone() && !future.isCompletedExceptionally()) {
                return future.join(); // the receipt won the race against the timeout
            }
            throw timedOut(id, timeoutMs);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("awaiting the receipt of event " + id + " failed", e.getCause());
        } finally {
            future.cancel(false); // withdraws the interest unless the receipt already completed it
        }
    }

    /** Whether the listening session is up (always false with {@code listen(false)}). */
    public boolean listening() {
        return listener != null && listener.listening();
    }

    /** How many distinct event ids are awaited right now. */
    public int pending() {
        return waiters.size();
    }

    /** Backend pid of the listening session, -1 when down (tests terminate it). */
    int listenerBackendPid() {
        return listener == null ? -1 : listener.backendPid();
    }

    /** Whether the listener saw {@code id} in a recent notification (tests use it). */
    boolean notifiedRecently(UUID id) {
        return waiters.notifiedRecently(id);
    }

    /** Stops both threads and the listening session; pending waits fail with IllegalStateException. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (listener != null) {
            listener.close();
        }
        fallback.close();
        timeouts.shutdownNow();
        join(listenerThread);
        join(fallbackThread);
        waiters.failAll(new IllegalStateException("FanoutReceipts closed before the receipt arrived"));
    }

    private long checkArgs(UUID id, Duration timeout) {
        Objects.requireNonNull(id, "id");
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        if (closed) {
            throw new IllegalStateException("FanoutReceipts is closed");
        }
        return Math.max(1, timeout.toMillis());
    }

    private void expire(CompletableFuture<Receipt> future, UUID id, long timeoutMs) {
        try {
            callbackExecutor.execute(() -> future.completeExceptionally(timedOut(id, timeoutMs)));
        } catch (RejectedExecutionException e) {
            future.completeExceptionally(timedOut(id, timeoutMs)); // the caller's executor is shutting down
        }
    }

    private TimeoutException timedOut(UUID id, long timeoutMs) {
        return new TimeoutException("no fan-out receipt for event " + id + " within " + timeoutMs + " ms: its row"
            + " is not stamped (fanned_out_at IS NULL). Is the relay running, and is the row committed and not"
            + " poisoned? (listening: " + listening() + ", pending receipts: " + pending() + ")");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    private static void join(Thread t) {
        if (t == null) {
            return;
        }
        try {
            t.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Settings of a {@link FanoutReceipts}; {@link #start()} opens the listening session. */
    public static final class Builder {
        private final ConnectionSource connections;
        private String table = OutboxWriter.DEFAULT_TABLE;
        private String channel = DEFAULT_CHANNEL;
        private boolean listen = true;
        private Duration fallbackInterval = DEFAULT_FALLBACK_INTERVAL;
        private ConnectionSource fallbackConnections;
        private Executor callbackExecutor = ForkJoinPool.commonPool();

        private Builder(ConnectionSource connections) {
            this.connections = Objects.requireNonNull(connections, "connections");
        }

        /** The outbox table, as the relay's {@code outbox.table} (default {@code events}). */
        public Builder table(String table) {
            WriterSql.quoteTable(table); // fails early on an empty name
            this.table = table;
            return this;
        }

        /** The receipt channel, as the relay's {@code outbox.fanned.channel}. */
        public Builder channel(String channel) {
            if (channel == null || channel.isEmpty()) {
                throw new IllegalArgumentException("channel must not be empty; use listen(false) when the relay sends"
                    + " no receipts");
            }
            this.channel = channel;
            return this;
        }

        /**
         * Whether to LISTEN at all (default true). False (e.g. behind PgBouncer in transaction mode, or with
         * receipts disabled on the relay) finds every receipt by the fallback read alone.
         */
        public Builder listen(boolean listen) {
            this.listen = listen;
            return this;
        }

        /** How often a pending wait is re-read from the table (default 250 ms, at least 10 ms). */
        public Builder fallbackInterval(Duration interval) {
            if (interval == null || interval.compareTo(Duration.ofMillis(10)) < 0) {
                throw new IllegalArgumentException("fallback interval must be at least 10 ms, got " + interval);
            }
            this.fallbackInterval = interval;
            return this;
        }

        /** Where the fallback reads get their short-lived connections, e.g. a pool's {@code getConnection}. */
        public Builder fallbackConnections(ConnectionSource fallbackConnections) {
            this.fallbackConnections = Objects.requireNonNull(fallbackConnections, "fallbackConnections");
            return this;
        }

        /** Where futures from {@link #expect} are completed (default: the common pool). */
        public Builder callbackExecutor(Executor executor) {
            this.callbackExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Opens the listening session on this thread (so a wrong URL or password fails here) and starts the
         * threads.
         *
         * @throws SQLException when the first LISTEN fails
         */
        public FanoutReceipts start() throws SQLException {
            return new FanoutReceipts(this);
        }
    }
}
