package io.outboxrelay.connector.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.testsupport.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/**
 * One real KRaft broker and one real Connect worker (distributed mode, in this JVM) shared by every
 * integration test; each test uses its own connector names and topics.
 */
public final class TestConnect {
    private static EmbeddedConnectCluster cluster;
    private static final ObjectMapper JSON = new ObjectMapper();

    private TestConnect() {
    }

    public static synchronized EmbeddedConnectCluster cluster() {
        if (cluster == null) {
            Map<String, String> worker = new HashMap<>();
            worker.put("offset.flush.interval.ms", "1000");
            worker.put("scheduled.rebalance.max.delay.ms", "0");
            // test-only converters (Apicurio's) on the classpath ship no ServiceLoader manifests;
            // our own plugin's manifest is checked by the plugin.path packaging test
            worker.put("plugin.discovery", "hybrid_warn");
            Properties broker = new Properties();
            broker.put("auto.create.topics.enable", "true");
            broker.put("num.partitions", "3");
            // the tests' events have fixed occurred_at timestamps (2026-01-01 and the like), which become the
            // records' timestamps: with the default 7-day retention a retention check deletes them mid-test,
            // and a consumer then waits for records that are gone (docs/replay.md, "Old timestamps")
            broker.put("log.retention.ms", "-1");
            // one broker: transactional producers (exactly-once workers of the fault suite) need a transaction
            // state log it can host, not the default replication factor of 3
            broker.put("transaction.state.log.replication.factor", "1");
            broker.put("transaction.state.log.min.isr", "1");
            EmbeddedConnectCluster c = new EmbeddedConnectCluster.Builder()
                .name("outbox-relay-it")
                .numWorkers(1)
                .workerProps(worker)
                .brokerProps(broker)
                .build();
            c.start();
            cluster = c;
            Runtime.getRuntime().addShutdownHook(new Thread(c::stop));
        }
        return cluster;
    }

    /** A connector config for the outbox in {@code db}: converters that make records easy to read. */
    public static Map<String, String> relayConfig(TestDatabase db, String subscriptions, int tasks) {
        Map<String, String> cfg = new HashMap<>(db.connectionProps());
        cfg.put("connector.class", "io.outboxrelay.connector.OutboxSourceConnector");
        cfg.put("tasks.max", Integer.toString(tasks));
        cfg.put("subscriptions", subscriptions);
        cfg.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        cfg.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        cfg.put("value.converter.schemas.enable", "false");
        cfg.put("outbox.sweep.interval.ms", "2000");
        return cfg;
    }

    /** A record as a test reads it: key, value as JSON, headers as strings, where it landed. */
    public record Received(String topic, int partition, long offset, String key, JsonNode value,
                           Map<String, String> headers) {
        public long seq() {
            return value.get("seq").asLong();
        }

        public String id() {
            return value.get("id").asText();
        }
    }

    /** Everything on {@code topics} from the beginning, reading until {@code expected} records or the timeout. */
    public static List<Received> consume(int expected, Duration timeout, String... topics) {
        return consumeRaw(expected, timeout, topics).stream().map(TestConnect::toReceived).toList();
    }

    /** The same as the bytes on the wire, for tests of what a converter wrote. */
    public static List<ConsumerRecord<byte[], byte[]>> consumeRaw(int expected, Duration timeout, String... topics) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "it-" + System.nanoTime());
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster().kafka().createConsumerAndSubscribeTo(props, topics)) {
            long deadline = System.nanoTime() + timeout.toNanos();
            long started = System.nanoTime();
            long firstAt = -1;
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (firstAt < 0) {
                        firstAt = System.nanoTime();
                    }
                    out.add(r);
                }
            }
            if (out.size() < expected) { // says what a test that then fails on the count saw
                System.err.printf("consume: %d of %d records from %s in %d ms (first after %d ms), assignment %s%n",
                    out.size(), expected, List.of(topics), (System.nanoTime() - started) / 1_000_000,
                    firstAt < 0 ? -1 : (firstAt - started) / 1_000_000, consumer.assignment());
            }
        }
        return out;
    }

    /** The number of records on a topic (sum of end offsets), without reading them. */
    public static long countRecords(String topic) {
        try (var admin = cluster().kafka().createAdminClient()) {
            var desc = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            long total = 0;
            for (var p : desc.partitions()) {
                total += cluster().kafka().endOffset(new TopicPartition(topic, p.partition()));
            }
            return total;
        } catch (Exception e) {
            return 0; // not created yet
        }
    }

    private static Received toReceived(ConsumerRecord<byte[], byte[]> r) {
        try {
            Map<String, String> headers = new HashMap<>();
            for (Header h : r.headers()) {
                headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
            }
            String key = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
            JsonNode value = r.value() == null ? null : JSON.readTree(r.value());
            return new Received(r.topic(), r.partition(), r.offset(), key, value, headers);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
