package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.outboxrelay.common.TaskMetricsRegistry;
import io.outboxrelay.common.TaskMetricsRegistry.Metric;
import io.outboxrelay.testsupport.ProjectFiles;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import io.prometheus.jmx.JmxCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The monitoring kit in {@code config-examples/monitoring/} works against a real worker: the JMX
 * exporter rules, loaded by the exporter's own collector, turn the running relay and mention tasks'
 * MBeans (and Connect's task metrics) into every metric the Grafana dashboard and the alert rules query,
 * on workers with plugin metrics and through the fallback MBean of older workers alike. A metric renamed
 * in the connector, or a query that names a metric nothing produces, fails here.
 */
class MonitoringKitIT {
    private static final String CONNECTOR = "monitoring";
    private static final String FALLBACK = "monitoring-fallback";
    /** The metric names a PromQL expression reads: ours and Connect's, as the exporter rules name them. */
    private static final Pattern METRIC = Pattern.compile("\\b((?:outboxrelay|kafka_connect)_[a-z0-9_]+)\\b");
    /** Table-wide figures published by relay task 0 only: summing them over tasks is wrong. */
    private static final Pattern TABLE_WIDE = Pattern.compile("outboxrelay_relay_(backlog_rows|oldest_unfanned_age_ms)");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private final List<TaskMetricsRegistry> fallbacks = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        fallbacks.forEach(TaskMetricsRegistry::close);
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void everyMetricTheDashboardAndTheAlertsQueryIsProducedByTheExporterRules() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("monitoring");
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 3);
        cfg.put("subscription.orders.topic", "monitoring-orders");
        cfg.put("mentions.enabled", "true");
        cfg.put("mentions.topic", "monitoring-mentions");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
        TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(CONNECTOR, 3, "relay up");
        db.insertEvents(50, 5, "order.created");
        db.execute("INSERT INTO events(type, subject, headers) VALUES ('order.created', 'bad', '[1]')");
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() ->
            RelayMetricsAndRetentionIT.metric(CONNECTOR, "rows-fanned-total") == 50
                && RelayMetricsAndRetentionIT.metric(CONNECTOR, "rows-poisoned-total") == 1
                && RelayMetricsAndRetentionIT.metric(CONNECTOR, "mentions", "passes-completed-total") >= 0);

        // an older worker's MBeans (io.outboxrelay:type=<kind>,...) with exactly the gauges this worker has
        for (String kind : List.of("relay", "mentions")) {
            fallbacks.add(TaskMetricsRegistry.register(null, kind, FALLBACK, "0", gaugesOf(kind)));
        }

        // as the exporter's agent does: the collector in a registry, scraped
        PrometheusRegistry registry = new PrometheusRegistry();
        new JmxCollector(monitoring().resolve("jmx-exporter.yaml").toFile()).register(registry);
        Map<String, Set<String>> produced = produced(registry.scrape());
        assertThat(produced).as("the exporter produces our metrics").containsKey("outboxrelay_relay_rows_claimed_total");

        Map<String, String> queries = queries();
        assertThat(queries).as("queries in the dashboard and the alert rules").hasSizeGreaterThan(10);
        List<String> missing = new ArrayList<>();
        Set<String> queried = new TreeSet<>();
        for (Map.Entry<String, String> q : queries.entrySet()) {
            Matcher m = METRIC.matcher(q.getValue());
            while (m.find()) {
                String name = m.group(1);
                queried.add(name);
                Set<String> connectors = produced.getOrDefault(name, Set.of());
                if (!connectors.contains(CONNECTOR)) {
                    missing.add(q.getKey() + ": " + name);
                } else if (name.startsWith("outboxrelay_") && !connectors.contains(FALLBACK)) {
                    missing.add(q.getKey() + ": " + name + " (not from the fallback MBean of older workers)");
                }
            }
        }
        assertThat(missing).as("queried but not produced; produced: %s", produced.keySet()).isEmpty();
        assertThat(queried).as("the kit covers relay, mentions and Connect's task status")
            .anyMatch(n -> n.startsWith("outboxrelay_relay_")).anyMatch(n -> n.startsWith("outboxrelay_mentions_"))
            .contains("kafka_connect_task_status");

        List<String> summed = queries.entrySet().stream()
            .filter(q -> TABLE_WIDE.matcher(q.getValue()).find()
                && (q.getValue().contains("sum") || !q.getValue().contains("max")))
            .map(q -> q.getKey() + ": " + q.getValue()).toList();
        assertThat(summed).as("backlog and oldest age come from relay task 0 only: max() over tasks, never sum()")
            .isEmpty();
    }

    /** Metric name as exposed (a counter gets its _total) to the values of its connector label. */
    private static Map<String, Set<String>> produced(MetricSnapshots scrape) {
        Map<String, Set<String>> out = new TreeMap<>();
        for (MetricSnapshot snapshot : scrape) {
            String name = snapshot.getMetadata().getPrometheusName()
                + (snapshot instanceof CounterSnapshot ? "_total" : "");
            Set<String> connectors = out.computeIfAbsent(name, n -> new TreeSet<>());
            for (DataPointSnapshot p : snapshot.getDataPoints()) {
                String connector = p.getLabels().get("connector");
                connectors.add(connector == null ? "" : connector);
            }
        }
        return out;
    }

    /** Every PromQL expression of the dashboard (panel targets, template variables) and the alert rules. */
    private static Map<String, String> queries() throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        collectStrings(JSON.readTree(monitoring().resolve("grafana-dashboard.json").toFile()), "dashboard", out);
        JsonNode rules = YAML.readTree(monitoring().resolve("prometheus-alerts.yaml").toFile());
        for (JsonNode group : rules.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                out.put("alert " + rule.path("alert").asText(), rule.path("expr").asText());
            }
        }
        return out;
    }

    private static void collectStrings(JsonNode node, String path, Map<String, String> out) {
        if (node.isTextual() && METRIC.matcher(node.asText()).find()) {
            out.put(path, node.asText());
        } else if (node.isObject()) {
            node.properties().forEach(e -> collectStrings(e.getValue(), path + "/" + e.getKey(), out));
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                collectStrings(node.get(i), path + "/" + i, out);
            }
        }
    }

    /** The attributes of this worker's plugin-metrics MBean of one kind of task, as zero-valued gauges. */
    private static Map<String, Metric> gaugesOf(String kind) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (ObjectName n : server.queryNames(new ObjectName("kafka.connect:type=plugins,*"), null)) {
            if (CONNECTOR.equals(n.getKeyProperty("connector")) && kind.equals(n.getKeyProperty("kind"))) {
                Map<String, Metric> gauges = new LinkedHashMap<>();
                for (MBeanAttributeInfo a : server.getMBeanInfo(n).getAttributes()) {
                    gauges.put(a.getName(), new Metric(a.getDescription(), () -> 0));
                }
                return gauges;
            }
        }
        throw new IllegalStateException("no " + kind + " plugin metrics for " + CONNECTOR);
    }

    private static Path monitoring() {
        return ProjectFiles.root().resolve("config-examples").resolve("monitoring");
    }
}
