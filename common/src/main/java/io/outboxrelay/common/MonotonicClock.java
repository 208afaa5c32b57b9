package io.outboxrelay.common;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.function.LongSupplier;

/**
 * A task's clock for its timers (the relay's lease extension, linger, back-off and sweep; the mention task's
 * scans and mark retries): it never goes back, and between two readings it moves by whichever moved more,
 * {@link System#nanoTime} or the wall clock. A wall clock stepped back (NTP) would push every deadline the
 * task set that much further away, and the leases it holds would lapse unextended; nanoTime alone stands
 * still while the host is suspended, when the database's clock, which the leases run on, does not. Starts at
 * the wall clock's reading.
 */
public final class MonotonicClock extends Clock {
    private final LongSupplier nanos;
    private final LongSupplier wallMillis;
    private long lastNanos;
    private long lastWallMillis;
    private long elapsedNanos;
    private final long originMillis;

    public MonotonicClock() {
        this(System::nanoTime, System::currentTimeMillis);
    }

    public MonotonicClock(LongSupplier nanos, LongSupplier wallMillis) {
        this.nanos = nanos;
        this.wallMillis = wallMillis;
        this.lastNanos = nanos.getAsLong();
        this.lastWallMillis = wallMillis.getAsLong();
        this.originMillis = lastWallMillis;
    }

    @Override
    public synchronized long millis() {
        long n = nanos.getAsLong();
        long w = wallMillis.getAsLong();
        elapsedNanos += Math.max(0, Math.max(n - lastNanos, (w - lastWallMillis) * 1_000_000L));
        lastNanos = n;
        lastWallMillis = w;
        return originMillis + elapsedNanos / 1_000_000L;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the task's timer clock has no zone");
    }
}
