package io.outboxrelay.quickstart;

import io.outboxrelay.embedded.EmbeddedBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;

/**
 * One KRaft broker in this JVM (Kafka's own test harness), and the reads the quickstart makes of what
 * the connector produced: record counts per topic from the end offsets, and records from the start
 * of a topic.
 */
final class QuickstartKafka implements AutoCloseable {
    private final EmbeddedKafkaCluster cluster;
    private Admin admin;

    private QuickstartKafka(EmbeddedKafkaCluster cluster) {
        this.cluster = cluster;
    }

    static QuickstartKafka start() {
        Properties broker = new Properties();
        broker.put("auto.create.topics.enable", "false"); // the connector's topic.creation.* settings create them
        broker.put("group.initial.rebalance.delay.ms", "0");
        return new QuickstartKafka(EmbeddedBroker.start(broker));
    }

    String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    private Admin admin() {
        if (admin == null) {
            admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.CLIENT_ID_CONFIG, "quickstart-progress"));
        }
        return admin;
    }

    private List<TopicPartition> partitions(String topic) {
        try {
            TopicDescription d = admin().describeTopics(List.of(topic)).allTopicNames().get(5, TimeUnit.SECONDS)
                .get(topic);
            List<TopicPartition> out = new ArrayList<>();
            for (TopicPartitionInfo p : d.partitions()) {
                out.add(new TopicPartition(topic, p.partition()));
            }
            return out;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return List.of(); // not created yet: the connector creates it with its first record
            }
            throw new IllegalStateException("describing topic " + topic + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new IllegalStateException("describing topic " + topic + " failed: " + e, e);
        }
    }

    /** Records on the topic (the sum of its partitions' end offsets); 0 before the topic exists. */
    synchronized long records(String topic) {
        List<TopicPartition> tps = partitions(topic);
        if (tps.isEmpty()) {
            return 0;
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        tps.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
        try {
            long total = 0;
            for (var info : admin().listOffsets(latest).all().get(5, TimeUnit.SECONDS).values()) {
                total += info.offset();
            }
            return total;
        } catch (ExecutionException | InterruptedException | TimeoutException e) {
            throw new IllegalStateException("reading the end offsets of " + topic + " failed: " + e, e);
        }
    }

    /** A record as printed for a newcomer: where it landed, key, headers and value as text. */
    record Received(String topic, int partition, long offset, String key, Map<String, String> headers, String value) {
    }

    /** Up to {@code max} records from the beginning of the topic, reading for at most {@code timeout}. */
    synchronized List<Received> readFromStart(String topic, int max, Duration timeout) {
        List<TopicPartition> tps = partitions(topic);
        List<Received> out = new ArrayList<>();
        if (tps.isEmpty()) {
            return out;
        }
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "quickstart-reader");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (out.size() < max && System.nanoTime() < deadline && !reachedEnd(c, ends)) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (out.size() < max) {
                        out.add(received(r));
                    }
                }
            }
        }
        return out;
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static Received received(ConsumerRecord<byte[], byte[]> r) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (Header h : r.headers()) {
            headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
        }
        return new Received(r.topic(), r.partition(), r.offset(),
            r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8), headers,
            r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
    }

    @Override
    public synchronized void close() {
        if (admin != null) {
            admin.close();
            admin = null;
        }
        cluster.stop();
    }
}
