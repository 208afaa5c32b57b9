package io.outboxrelay.connector.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads a whole topic, from the beginning up to the end offsets it had when the read started, into
 * {@link DeliveryChecker.Delivered} entries. No consumer group: partitions are assigned directly.
 */
final class TopicContents {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TopicContents() {
    }

    /** An outbox relay record: id from the {@code event.id} header, seq from the value, key = subject. */
    static DeliveryChecker.Delivered outboxRecord(ConsumerRecord<byte[], byte[]> r) {
        String id = header(r, "event.id");
        JsonNode value = json(r.value());
        return new DeliveryChecker.Delivered(id, string(r.key()), value == null ? -1 : value.path("seq").asLong(-1),
            r.partition(), r.offset());
    }

    /** A recovered-mention record: id = {@code <message_id>/<agent_account_id>}, seq = the message seq. */
    static DeliveryChecker.Delivered mentionRecord(ConsumerRecord<byte[], byte[]> r) {
        JsonNode value = json(r.value());
        return new DeliveryChecker.Delivered(value.get("message_id").asText() + "/" + value.get("agent_account_id").asText(),
            string(r.key()), value.path("message_seq").asLong(-1), r.partition(), r.offset());
    }

    /** What a consumer of the topic sees: every record in the log, or ({@code read_committed}) only committed ones. */
    enum Isolation {
        READ_UNCOMMITTED, READ_COMMITTED
    }

    static List<DeliveryChecker.Delivered> read(String bootstrapServers, String topic) {
        return read(bootstrapServers, topic, TopicContents::outboxRecord);
    }

    static List<DeliveryChecker.Delivered> read(String bootstrapServers, String topic,
                                                Function<ConsumerRecord<byte[], byte[]>, DeliveryChecker.Delivered> parse) {
        return read(bootstrapServers, topic, parse, Isolation.READ_UNCOMMITTED);
    }

    /** @param isolation {@code READ_COMMITTED} reads up to the last stable offset and skips aborted records */
    static List<DeliveryChecker.Delivered> read(String bootstrapServers, String topic,
                                                Function<ConsumerRecord<byte[], byte[]>, DeliveryChecker.Delivered> parse,
                                                Isolation isolation) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.name().toLowerCase(java.util.Locale.ROOT));
        List<DeliveryChecker.Delivered> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
            if (infos == null || infos.isEmpty()) {
                return out; // never created: nothing was delivered
            }
            List<TopicPartition> partitions = infos.stream().map(p -> new TopicPartition(topic, p.partition()))
                .collect(Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (!caughtUp(consumer, end)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " up to " + end + " within 120 s");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.offset() < end.get(new TopicPartition(r.topic(), r.partition()))) {
                        out.add(parse.apply(r));
                    }
                }
            }
        }
        return out;
    }

    private static boolean caughtUp(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey(), Duration.ofSeconds(30)) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** The sum of the topic's end offsets: how many records it holds, without reading them. */
    static long count(String bootstrapServers, String topic) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
            if (infos == null || infos.isEmpty()) {
                return 0;
            }
            List<TopicPartition> partitions = infos.stream().map(p -> new TopicPartition(topic, p.partition()))
                .collect(Collectors.toList());
            return consumer.endOffsets(partitions, Duration.ofSeconds(10)).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String key) {
        Header h = r.headers().lastHeader(key);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static String string(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private static JsonNode json(byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        try {
            return JSON.readTree(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
