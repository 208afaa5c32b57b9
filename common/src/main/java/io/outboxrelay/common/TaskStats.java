package io.outboxrelay.common;

import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MeasurableStat;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Max;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.common.metrics.stats.Value;
import org.apache.kafka.common.utils.Time;

/**
 * A task's totals, rates and windowed maxima on Kafka's metrics library, published by
 * {@link TaskMetricsRegistry} under the names given here. The sensors live in a {@link Metrics} of the
 * task's own, not in the worker's plugin metrics: recording starts before the task has its context (the
 * LISTEN thread counts wake-ups from the start), older workers have no plugin metrics, and the worker's
 * sensor names are shared by all its tasks.
 */
public final class TaskStats {
    /** Rates and maxima cover the last this many seconds. */
    public static final int WINDOW_SECONDS = 30;
    private static final String GROUP = "outbox-relay-task";

    private final Metrics metrics;
    private final Map<String, Metric> published = new LinkedHashMap<>();

    public TaskStats() {
        this(Time.SYSTEM);
    }

    public TaskStats(Time time) {
        // one-second samples, one more than the window has seconds: a rate is never divided by less than
        // the window, and a value leaves the maximum 30 to 31 s after it was recorded
        MetricConfig config = new MetricConfig().samples(WINDOW_SECONDS + 1).timeWindow(1, TimeUnit.SECONDS);
        metrics = new Metrics(config, List.of(), time);
    }

    /** Publishes {@code <name>-total}: the sum of the values the sensor records, since the task started. */
    public Sensor total(String name, String description) {
        Sensor sensor = metrics.sensor(name);
        add(sensor, name + "-total", description, new CumulativeSum());
        return sensor;
    }

    /** {@link #total} and {@code <name>-rate}: the values recorded per second over the window. */
    public Sensor totalAndRate(String name, String totalDescription, String rateDescription) {
        Sensor sensor = total(name, totalDescription);
        add(sensor, name + "-rate", rateDescription + " (last " + WINDOW_SECONDS + " s)", new Rate(TimeUnit.SECONDS));
        return sensor;
    }

    /** Publishes {@code <name>-total}: how many times the sensor recorded, since the task started. */
    public Sensor count(String name, String description) {
        Sensor sensor = metrics.sensor(name);
        add(sensor, name + "-total", description, new CumulativeCount());
        return sensor;
    }

    /**
     * Publishes {@code <name>-last-ms}, the last duration recorded (0 before the first), and
     * {@code <name>-max-ms}, the longest in the window (0 when none was recorded there).
     */
    public Sensor durations(String name, String lastDescription, String maxDescription) {
        Sensor sensor = metrics.sensor(name);
        add(sensor, name + "-last-ms", lastDescription, new Value());
        KafkaMetric max = register(sensor, name + "-max-ms", new Max());
        publish(name + "-max-ms", maxDescription + " (last " + WINDOW_SECONDS + " s; 0 when none)", () -> {
            double v = (Double) max.metricValue();
            return Double.isNaN(v) || Double.isInfinite(v) ? 0.0 : v;
        });
        return sensor;
    }

    /** A value the task keeps itself, read on every access. */
    public void gauge(String metric, String description, Supplier<? extends Number> value) {
        publish(metric, description, value);
    }

    /** Metric name (kebab-case) to description and value, for {@link TaskMetricsRegistry#register}. */
    public Map<String, Metric> published() {
        return Collections.unmodifiableMap(published);
    }

    /** The current value of a published metric. */
    public double value(String metric) {
        Metric m = published.get(metric);
        if (m == null) {
            throw new IllegalArgumentException("no metric " + metric + " among " + published.keySet());
        }
        return m.value().get().doubleValue();
    }

    private void add(Sensor sensor, String metric, String description, MeasurableStat stat) {
        KafkaMetric m = register(sensor, metric, stat);
        publish(metric, description, () -> (Double) m.metricValue());
    }

    private KafkaMetric register(Sensor sensor, String metric, MeasurableStat stat) {
        MetricName name = metrics.metricName(metric, GROUP);
        sensor.add(name, stat);
        return metrics.metric(name);
    }

    private void publish(String metric, String description, Supplier<? extends Number> value) {
        if (published.putIfAbsent(metric, new Metric(description, value)) != null) {
            throw new IllegalArgumentException("metric " + metric + " is published twice");
        }
    }
}
