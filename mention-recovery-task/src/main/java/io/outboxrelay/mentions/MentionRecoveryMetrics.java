package io.outboxrelay.mentions;

import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Running totals of one mention-recovery task, readable from any thread (published over JMX through {@link #gauges()}).
 * Counts are since the task started.
 */
public final class MentionRecoveryMetrics {
    private final AtomicLong messagesScanned = new AtomicLong();
    private final AtomicLong messagesMarked = new AtomicLong();
    private final AtomicLong messageFaults = new AtomicLong();
    private final AtomicLong messagesUndelivered = new AtomicLong();
    private final AtomicLong passesCompleted = new AtomicLong();
    private final AtomicLong passesFailed = new AtomicLong();
    private final AtomicLong lastPassDurationMs = new AtomicLong(-1);
    private final Map<Arm, AtomicLong> recovered = new EnumMap<>(Arm.class);

    public MentionRecoveryMetrics() {
        for (Arm arm : Arm.values()) {
            recovered.put(arm, new AtomicLong());
        }
    }

    /** Unrouted messages read by the scan. */
    public long messagesScanned() {
        return messagesScanned.get();
    }

    /** Messages whose {@code mentions_routed_at} this task set. */
    public long messagesMarked() {
        return messagesMarked.get();
    }

    /** Messages left unrouted because their blocks could not be read. */
    public long messageFaults() {
        return messageFaults.get();
    }

    /** Messages left unrouted because a record came back without metadata (not delivered). */
    public long messagesUndelivered() {
        return messagesUndelivered.get();
    }

    /** Records produced for this arm. */
    public long recovered(Arm arm) {
        return recovered.get(arm).get();
    }

    /** Records produced for all arms. */
    public long recoveredTotal() {
        return recovered.values().stream().mapToLong(AtomicLong::get).sum();
    }

    public long passesCompleted() {
        return passesCompleted.get();
    }

    /** Passes ended early by a database error. */
    public long passesFailed() {
        return passesFailed.get();
    }

    /** Wall time of the last completed pass, or -1 before the first one. */
    public long lastPassDurationMs() {
        return lastPassDurationMs.get();
    }

    void scanned(int messages) {
        messagesScanned.addAndGet(messages);
    }

    void marked(int messages) {
        messagesMarked.addAndGet(messages);
    }

    void faults(int messages) {
        messageFaults.addAndGet(messages);
    }

    void undelivered(int messages) {
        messagesUndelivered.addAndGet(messages);
    }

    void recovered(Arm arm, int records) {
        recovered.get(arm).addAndGet(records);
    }

    void passCompleted(long durationMs) {
        passesCompleted.incrementAndGet();
        lastPassDurationMs.set(durationMs);
    }

    void passFailed() {
        passesFailed.incrementAndGet();
    }

    /** The gauges published over JMX (kind=mentions). */
    public Map<String, Metric> gauges() {
        Map<String, Metric> m = new LinkedHashMap<>();
        m.put("messages-scanned-total", new Metric(
            "Unrouted messages read by recovery passes", this::messagesScanned));
        m.put("messages-marked-total", new Metric(
            "Messages marked mentions_routed_at after their records were acknowledged", this::messagesMarked));
        m.put("message-faults-total", new Metric(
            "Messages left unmarked because they could not be processed (e.g. blocks not an array)",
            this::messageFaults));
        for (Arm arm : Arm.values()) {
            m.put("mentions-recovered-" + arm.name().toLowerCase(Locale.ROOT) + "-total",
                new Metric("Recovered mentions routed as " + arm,
                    () -> recovered(arm)));
        }
        m.put("passes-completed-total", new Metric(
            "Recovery passes that completed", this::passesCompleted));
        m.put("passes-failed-total", new Metric(
            "Recovery passes ended by an error (retried with backoff)", this::passesFailed));
        m.put("last-pass-duration-ms", new Metric(
            "Duration of the last completed pass; -1 before the first", this::lastPassDurationMs));
        return m;
    }
}
