package io.outboxrelay.writer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The events someone awaits, shared by the listener and the fallback checker. Each pending id has a
 * next fallback check time. A bounded memory of recently notified ids closes the gap between a
 * caller's commit and its {@code await}: when the notification arrived first, the registration finds
 * it there and asks for an immediate read instead of waiting a fallback interval.
 *
 * <p>Ordering that makes this race-free: the listener records an id as notified before it looks for
 * waiters, and a registration publishes its waiter before it looks at the notified ids.
 */
final class ReceiptWaiters {
    static final int RECENT_IDS = 4_096;

    /** One pending event id; {@code interests} is only touched under the map's lock for this key. */
    private static final class Waiter {
        final UUID id;
        final List<Interest> interests = new ArrayList<>(1);
        volatile boolean notifiedBeforeRegistration;
        volatile long nextCheckNanos;

        Waiter(UUID id, long nextCheckNanos) {
            this.id = id;
            this.nextCheckNanos = nextCheckNanos;
        }
    }

    /** A future and where to complete it (null: on the completing receipts thread). */
    private record Interest(CompletableFuture<Receipt> future, Executor executor) {
    }

    private final ConcurrentHashMap<UUID, Waiter> byId = new ConcurrentHashMap<>();
    private final Map<UUID, Boolean> recentlyNotified = new LinkedHashMap<>(RECENT_IDS * 2) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<UUID, Boolean> eldest) {
            return size() > RECENT_IDS;
        }
    };
    private final BlockingQueue<Boolean> checkNow = new ArrayBlockingQueue<>(1);
    private final long intervalNanos;

    ReceiptWaiters(long intervalNanos) {
        this.intervalNanos = intervalNanos;
    }

    /**
     * Registers interest in {@code id}. The future is completed with the receipt, through
     * {@code executor} when one is given; completing or cancelling it otherwise withdraws the interest.
     */
    CompletableFuture<Receipt> register(UUID id, Executor executor) {
        CompletableFuture<Receipt> future = new CompletableFuture<>();
        Interest interest = new Interest(future, executor);
        long now = System.nanoTime();
        Waiter waiter = byId.compute(id, (k, w) -> {
            Waiter out = w == null ? new Waiter(id, now + intervalNanos) : w;
            out.interests.add(interest);
            return out;
        });
        future.whenComplete((r, e) -> withdraw(id, interest));
        if (notifiedRecently(id)) {
            waiter.notifiedBeforeRegistration = true;
            waiter.nextCheckNanos = now;
            checkNow.offer(Boolean.TRUE);
        }
        return future;
    }

    private void withdraw(UUID id, Interest interest) {
        byId.computeIfPresent(id, (k, w) -> {
            w.interests.remove(interest);
            return w.interests.isEmpty() ? null : w;
        });
    }

    /** Remembers notified ids and returns those someone awaits. */
    List<UUID> noteNotified(List<UUID> ids) {
        synchronized (recentlyNotified) {
            for (UUID id : ids) {
                recentlyNotified.put(id, Boolean.TRUE);
            }
        }
        List<UUID> awaited = new ArrayList<>();
        for (UUID id : ids) {
            if (byId.containsKey(id)) {
                awaited.add(id);
            }
        }
        return awaited;
    }

    boolean notifiedRecently(UUID id) {
        synchronized (recentlyNotified) {
            return recentlyNotified.containsKey(id);
        }
    }

    /**
     * Completes the waiters of stamped rows; their interests are withdrawn first.
     *
     * @param notified whether a notification named these rows (else: the fallback read found them)
     */
    void complete(List<ReceiptReader.Stamp> stamps, boolean notified) {
        for (ReceiptReader.Stamp s : stamps) {
            Waiter w = byId.remove(s.id());
            if (w == null) {
                continue;
            }
            Receipt receipt = new Receipt(s.id(), s.fannedOutAt(), s.fanout(),
                notified || w.notifiedBeforeRegistration ? Receipt.Source.NOTIFY : Receipt.Source.FALLBACK);
            for (Interest i : w.interests) {
                deliver(i, receipt);
            }
        }
    }

    private static void deliver(Interest i, Receipt receipt) {
        if (i.executor() != null) {
            try {
                i.executor().execute(() -> i.future().complete(receipt));
                return;
            } catch (RejectedExecutionException e) {
                // the caller's executor is shutting down: complete here rather than never
            }
        }
        i.future().complete(receipt);
    }

    /** Ids whose fallback check is due (or nearly: within a quarter interval); reschedules them. */
    List<UUID> takeDue(long now) {
        long horizon = now + intervalNanos / 4;
        List<UUID> due = new ArrayList<>();
        for (Waiter w : byId.values()) {
            if (w.nextCheckNanos - horizon <= 0) {
                w.nextCheckNanos = now + intervalNanos;
                due.add(w.id);
            }
        }
        return due;
    }

    /** Makes every pending id due now (notifications may have been lost) and wakes the checker. */
    void checkAllNow() {
        long now = System.nanoTime();
        for (Waiter w : byId.values()) {
            w.nextCheckNanos = now;
        }
        checkNow.offer(Boolean.TRUE);
    }

    /** Sleeps until the next fallback check is due, at most one interval, or until woken. */
    void awaitNextDue() throws InterruptedException {
        long now = System.nanoTime();
        long sleep = intervalNanos;
        for (Waiter w : byId.values()) {
            sleep = Math.min(sleep, w.nextCheckNanos - now);
        }
        if (sleep > 0) {
            checkNow.poll(sleep, TimeUnit.NANOSECONDS);
        } else {
            checkNow.poll();
        }
    }

    /** Wakes a sleeping checker (used to stop it). */
    void wake() {
        checkNow.offer(Boolean.TRUE);
    }

    int size() {
        return byId.size();
    }

    /** Fails every pending interest with {@code cause}. */
    void failAll(RuntimeException cause) {
        for (UUID id : List.copyOf(byId.keySet())) {
            Waiter w = byId.remove(id);
            if (w != null) {
                for (Interest i : w.interests) {
                    i.future().completeExceptionally(cause);
                }
            }
        }
    }
}
