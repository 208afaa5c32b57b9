package io.outboxrelay.connector;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.function.LongSupplier;

/**
 * The task's clock for its timers (lease extension, linger, back-off, the sweep): milliseconds from
 * {@link System#nanoTime}, which only move forward. The wall clock can be stepped back (NTP, a VM
 * resumed); every deadline the task set would then lie that much further away, and leases it holds
 * would lapse unextended. Starts at the wall clock's reading, so that values still look like times.
 */
final class MonotonicClock extends Clock {
    private final LongSupplier nanos;
    private final long originNanos;
    private final long originMillis;

    MonotonicClock() {
        this(System::nanoTime, System.currentTimeMillis());
    }

    MonotonicClock(LongSupplier nanos, long originMillis) {
        this.nanos = nanos;
        this.originNanos = nanos.getAsLong();
        this.originMillis = originMillis;
    }

    @Override
    public long millis() {
        return originMillis + (nanos.getAsLong() - originNanos) / 1_000_000L;
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
