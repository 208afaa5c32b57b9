package io.outboxrelay.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * The benchmark's one Kafka node, a real KRaft broker on loopback in a JVM of its own ({@link BrokerProcess}),
 * shared by every contender. Topics are created up front, {@link #PARTITIONS} partitions each, so no contender
 * pays for topic creation inside a measurement.
 */
final class BenchKafka implements AutoCloseable {
    static final int PARTITIONS = 3;

    private final BrokerProcess broker;
    private final Admin admin;

    private BenchKafka(BrokerProcess broker) {
        this.broker = broker;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
            AdminClientConfig.CLIENT_ID_CONFIG, "bench-admin"));
    }

    /** Starts the node; its files and logs go to {@code workDir/broker/}. */
    static BenchKafka start(Path workDir, Path logConfig) throws IOException, InterruptedException {
        return new BenchKafka(BrokerProcess.start(workDir, logConfig));
    }

    /** The broker's process id, for CPU accounting. */
    long pid() {
        return broker.pid();
    }

    /** At JVM exit after an interruption. */
    void kill() {
        broker.kill();
    }

    String bootstrapServers() {
        return broker.bootstrapServers();
    }

    void createTopics(List<String> topics) {
        createTopics(topics, Map.of());
    }

    void createTopics(List<String> topics, Map<String, String> configs) {
        List<NewTopic> fresh = new ArrayList<>();
        for (String t : topics) {
            fresh.add(new NewTopic(t, PARTITIONS, (short) 1).configs(configs));
        }
        try {
            admin.createTopics(fresh).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("creating topics " + topics + " failed: " + e.getMessage(), e);
        }
    }

    void createTopicsIfMissing(List<String> topics) {
        createTopicsIfMissing(topics, Map.of());
    }

    void createTopicsIfMissing(List<String> topics, Map<String, String> configs) {
        try {
            java.util.Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<String> missing = topics.stream().filter(t -> !existing.contains(t)).toList();
            if (!missing.isEmpty()) {
                createTopics(missing, configs);
            }
        } catch (Exception e) {
            throw new IllegalStateException("creating topics " + topics + " failed: " + e.getMessage(), e);
        }
    }

    List<TopicPartition> partitions(List<String> topics) {
        try {
            Map<String, TopicDescription> d = admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS);
            List<TopicPartition> out = new ArrayList<>();
            for (TopicDescription td : d.values()) {
                for (TopicPartitionInfo p : td.partitions()) {
                    out.add(new TopicPartition(td.name(), p.partition()));
                }
            }
            return out;
        } catch (Exception e) {
            throw new IllegalStateException("describing " + topics + " failed: " + e.getMessage(), e);
        }
    }

    /** The end offset of every partition of the topics. */
    Map<TopicPartition, Long> endOffsets(List<String> topics) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (TopicPartition tp : partitions(topics)) {
            latest.put(tp, OffsetSpec.latest());
        }
        try {
            Map<TopicPartition, Long> out = new HashMap<>();
            admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
            return out;
        } catch (Exception e) {
            throw new IllegalStateException("listing offsets of " + topics + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        admin.close();
        broker.close();
    }
}
