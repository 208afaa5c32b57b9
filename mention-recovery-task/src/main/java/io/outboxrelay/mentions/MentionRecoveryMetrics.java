package io.outboxrelay.mentions;

import io.outboxrelay.common.PostgresListener;
import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import io.outboxrelay.common.TaskStats;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.metrics.Sensor;

/**
 * Running totals of one mention-recovery task, readable from any thread (published over JMX through {@link #gauges}).
 * Counts are since the task started.
 */
public final class MentionRecoveryMetrics {
    private final TaskStats stats;
    private final Sensor messagesScanned;
    private final Sensor messagesMarked;
    private final Sensor messageFaults;
    private final Sensor passesCompleted;
    private final Sensor passesFailed;
    private final Sensor marksFailed;
    private final Map<Arm, Sensor> recovered = new EnumMap<>(Arm.class);
    /** Read by the tests only, not published. */
    private final AtomicLong messagesUndelivered = new AtomicLong();
    private final AtomicLong lastPassDurationMs = new AtomicLong(-1);

    public MentionRecoveryMetrics() {
        stats = new TaskStats();
        messagesScanned = stats.total("messages-scanned", "Unrouted messages read by recovery passes");
        messagesMarked = stats.total("messages-marked",
            "Messages marked mentions_routed_at after their records were acknowledged");
        messageFaults = stats.total("message-faults",
            "Messages left unmarked because they could not be processed (e.g. blocks not an array)");
        for (Arm arm : Arm.values()) {
            recovered.put(arm, stats.total("mentions-recovered-" + arm.name().toLowerCase(Locale.ROOT),
                "Recovered mentions routed as " + arm));
        }
        passesCompleted = stats.count("passes-completed", "Recovery passes that completed");
        passesFailed = stats.count("passes-failed", "Recovery passes ended by an error (retried with backoff)");
        marksFailed = stats.count("marks-failed", "Marks of delivered messages that failed (retried with backoff; no"
            + " batch is read until one succeeds)");
        stats.gauge("last-pass-duration-ms", "Duration of the last completed pass; -1 before the first",
            lastPassDurationMs::get);
    }

    /** Unrouted messages read by the scan. */
    public long messagesScanned() {
        return total("messages-scanned-total");
    }

    /** Messages whose {@code mentions_routed_at} this task set. */
    public long messagesMarked() {
        return total("messages-marked-total");
    }

    /** Messages left unrouted because their blocks could not be read. */
    public long messageFaults() {
        return total("message-faults-total");
    }

    /** Messages left unrouted because a record came back without metadata (not delivered). */
    public long messagesUndelivered() {
        return messagesUndelivered.get();
    }

    /** Records produced for this arm. */
    public long recovered(Arm arm) {
        return total("mentions-recovered-" + arm.name().toLowerCase(Locale.ROOT) + "-total");
    }

    /** Records produced for all arms. */
    public long recoveredTotal() {
        long sum = 0;
        for (Arm arm : Arm.values()) {
            sum += recovered(arm);
        }
        return sum;
    }

    public long passesCompleted() {
        return total("passes-completed-total");
    }

    /** Passes ended early by a database error. */
    public long passesFailed() {
        return total("passes-failed-total");
    }

    /** Marks of delivered messages that failed, each retried after the marks' backoff. */
    public long marksFailed() {
        return total("marks-failed-total");
    }

    /** Wall time of the last completed pass, or -1 before the first one. */
    public long lastPassDurationMs() {
        return lastPassDurationMs.get();
    }

    void scanned(int messages) {
        messagesScanned.record(messages);
    }

    void marked(int messages) {
        messagesMarked.record(messages);
    }

    void faults(int messages) {
        messageFaults.record(messages);
    }

    void undelivered(int messages) {
        messagesUndelivered.addAndGet(messages);
    }

    void recovered(Arm arm, int records) {
        recovered.get(arm).record(records);
    }

    void passCompleted(long durationMs) {
        passesCompleted.record();
        lastPassDurationMs.set(durationMs);
    }

    void passFailed() {
        passesFailed.record();
    }

    void markFailed() {
        marksFailed.record();
    }

    /** The gauges published over JMX (kind=mentions); {@code hearsNothing} reads the task's LISTEN session. */
    public Map<String, Metric> gauges(BooleanSupplier hearsNothing) {
        Map<String, Metric> m = new LinkedHashMap<>(stats.published());
        m.put("listen-hears-nothing", PostgresListener.hearsNothingMetric(hearsNothing,
            "mentions.notify.channel empty"));
        return m;
    }

    private long total(String metric) {
        return (long) stats.value(metric);
    }
}
