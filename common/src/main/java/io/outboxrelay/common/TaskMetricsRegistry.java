package io.outboxrelay.common;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes a task's gauges over JMX. Where the worker offers Connect's plugin-metrics API (Kafka 4.1
 * and later) the gauges are registered there and appear as
 * {@code kafka.connect:type=plugins,connector=<name>,task=<id>}; on older workers they are this
 * project's own MBean {@code io.outboxrelay:type=<kind>,connector=<name>,task=<id>}.
 */
public final class TaskMetricsRegistry implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TaskMetricsRegistry.class);

    private final List<Runnable> unregister = new ArrayList<>();

    private TaskMetricsRegistry() {
    }

    /**
     * @param gauges metric name (kebab-case) to description and value; read on every JMX access
     */
    public static TaskMetricsRegistry register(SourceTaskContext context, String kind, String connector, String task,
                                               Map<String, Metric> gauges) {
        TaskMetricsRegistry registry = new TaskMetricsRegistry();
        PluginMetrics plugin = pluginMetrics(context);
        if (plugin != null) {
            try {
                LinkedHashMap<String, String> tags = new LinkedHashMap<>();
                tags.put("kind", kind);
                for (Map.Entry<String, Metric> g : gauges.entrySet()) {
                    MetricName name = plugin.metricName(g.getKey(), g.getValue().description(), tags);
                    Supplier<? extends Number> value = g.getValue().value();
                    removeQuietly(plugin, name); // a previous incarnation of this task may not have closed yet
                    plugin.addMetric(name, (Gauge<Double>) (config, now) -> value.get().doubleValue());
                    registry.unregister.add(() -> removeQuietly(plugin, name));
                }
            } catch (RuntimeException e) {
                // metrics must never stop the relay
                log.warn("Could not register the {} task metrics: {}", kind, e.toString());
            }
            return registry;
        }
        try {
            ObjectName name = new ObjectName("io.outboxrelay:type=" + ObjectName.quote(kind) + ",connector="
                + ObjectName.quote(connector) + ",task=" + ObjectName.quote(task));
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(new GaugesMBean(gauges), name);
            registry.unregister.add(() -> {
                try {
                    server.unregisterMBean(name);
                } catch (Exception ignored) {
                    // already gone
                }
            });
        } catch (Exception e) {
            log.warn("Could not register the {} task metrics MBean: {}", kind, e.toString());
        }
        return registry;
    }

    private static void removeQuietly(PluginMetrics plugin, MetricName name) {
        try {
            plugin.removeMetric(name);
        } catch (IllegalArgumentException e) {
            // not registered: nothing to remove
        }
    }

    private static PluginMetrics pluginMetrics(SourceTaskContext context) {
        if (context == null) {
            return null;
        }
        try {
            return context.pluginMetrics();
        } catch (AbstractMethodError | NoSuchMethodError | UnsupportedOperationException e) {
            return null; // a worker older than Kafka 4.1
        }
    }

    @Override
    public void close() {
        unregister.forEach(Runnable::run);
        unregister.clear();
    }

    /** One gauge: what it means and how to read it. */
    public record Metric(String description, Supplier<? extends Number> value) {
    }

    /** Read-only MBean whose attributes are the gauges. */
    static final class GaugesMBean implements DynamicMBean {
        private final Map<String, Metric> gauges;

        GaugesMBean(Map<String, Metric> gauges) {
            this.gauges = Map.copyOf(gauges);
        }

        @Override
        public Object getAttribute(String attribute) {
            Metric m = gauges.get(attribute);
            return m == null ? null : m.value().get().doubleValue();
        }

        @Override
        public void setAttribute(Attribute attribute) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public AttributeList getAttributes(String[] attributes) {
            AttributeList list = new AttributeList();
            for (String a : attributes) {
                list.add(new Attribute(a, getAttribute(a)));
            }
            return list;
        }

        @Override
        public AttributeList setAttributes(AttributeList attributes) {
            return new AttributeList();
        }

        @Override
        public Object invoke(String actionName, Object[] params, String[] signature) {
            throw new UnsupportedOperationException("no operations");
        }

        @Override
        public MBeanInfo getMBeanInfo() {
            MBeanAttributeInfo[] attrs = gauges.entrySet().stream()
                .map(e -> new MBeanAttributeInfo(e.getKey(), "java.lang.Double", e.getValue().description(), true,
                    false, false))
                .toArray(MBeanAttributeInfo[]::new);
            return new MBeanInfo(GaugesMBean.class.getName(), "Outbox relay task metrics", attrs, null, null, null);
        }
    }
}
