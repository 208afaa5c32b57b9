package io.outboxrelay.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A plain consumer that watches a run's topics from their current end, and tells when every event id
 * of the run ({@code [idBase, idBase + count)}) is visible on every topic: that instant ends a drain.
 * Duplicates are counted, not double-counted. For latency runs it keeps each id's first receive time
 * ({@link System#nanoTime()}, the writer's clock). The first records are kept as samples of the
 * exact bytes a contender produced (the producer ceiling replays them).
 */
final class RecordWatcher implements AutoCloseable {
    static final int SAMPLES = 2000;

    /** One record as produced: key, value and header bytes. */
    record Sample(String topic, byte[] key, byte[] value, List<Header> headers) {
        int size() {
            int n = (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
            for (Header h : headers) {
                n += h.key().length() + (h.value() == null ? 0 : h.value().length);
            }
            return n;
        }
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Map<String, Integer> topicIndex = new HashMap<>();
    private final BitSet[] seen;
    private final long idBase;
    private final int count;
    private final long[] receiveNanos;
    private final long[] timestampMs;
    private final List<Sample> samples = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile long distinct;
    private volatile long records;
    private volatile long bytes;
    private volatile long duplicates;
    private volatile long foreign;
    private volatile long completedAtNanos;
    private volatile long firstAtNanos;
    private volatile Throwable failure;

    /**
     * Starts watching: positions are the topics' end offsets at this call, so only records produced after it
     * count.
     */
    RecordWatcher(BenchKafka kafka, List<String> topics, long idBase, int count, boolean keepReceiveTimes) {
        this(kafka, topics, idBase, count, keepReceiveTimes, false);
    }

    /** @param readCommitted sees records only once their transaction committed, as an exactly-once consumer does */
    RecordWatcher(BenchKafka kafka, List<String> topics, long idBase, int count, boolean keepReceiveTimes,
                  boolean readCommitted) {
        this.idBase = idBase;
        this.count = count;
        this.seen = new BitSet[topics.size()];
        for (int i = 0; i < topics.size(); i++) {
            topicIndex.put(topics.get(i), i);
            seen[i] = new BitSet(count);
        }
        this.receiveNanos = keepReceiveTimes ? new long[count] : null;
        this.timestampMs = keepReceiveTimes ? new long[count] : null;
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "bench-watcher");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 * 1024 * 1024);
        props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 64 * 1024 * 1024);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted");
        this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        Map<TopicPartition, Long> ends = kafka.endOffsets(topics);
        consumer.assign(ends.keySet());
        ends.forEach(consumer::seek);
        this.thread = new Thread(this::run, "bench-watcher");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        long expected = (long) count * seen.length;
        try {
            while (!closed) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(50));
                if (batch.isEmpty()) {
                    continue;
                }
                long now = System.nanoTime();
                if (firstAtNanos == 0) {
                    firstAtNanos = now;
                }
                long d = distinct;
                long r = records;
                long b = bytes;
                for (ConsumerRecord<byte[], byte[]> rec : batch) {
                    r++;
                    b += rec.serializedKeySize() + Math.max(0, rec.serializedValueSize());
                    Integer t = topicIndex.get(rec.topic());
                    long id = BenchEvents.idOf(rec.value()) - idBase;
                    if (t == null || id < 0 || id >= count) {
                        foreign++;
                        continue;
                    }
                    if (seen[t].get((int) id)) {
                        duplicates++;
                        continue;
                    }
                    seen[t].set((int) id);
                    d++;
                    if (receiveNanos != null && receiveNanos[(int) id] == 0) {
                        receiveNanos[(int) id] = now;
                        timestampMs[(int) id] = rec.timestamp();
                    }
                    if (samples.size() < SAMPLES) {
                        List<Header> hs = new ArrayList<>();
                        rec.headers().forEach(hs::add);
                        samples.add(new Sample(rec.topic(), rec.key(), rec.value(), hs));
                    }
                }
                records = r;
                bytes = b;
                distinct = d;
                if (d >= expected && completedAtNanos == 0) {
                    completedAtNanos = now;
                    synchronized (this) {
                        notifyAll();
                    }
                }
            }
        } catch (Throwable t) {
            failure = t;
            synchronized (this) {
                notifyAll();
            }
        } finally {
            consumer.close();
        }
    }

    /** Waits until every id is visible on every topic; false on timeout. */
    boolean awaitComplete(Duration timeout) throws InterruptedException {
        return awaitDistinct((long) count * seen.length, timeout);
    }

    /**
     * Waits until {@code expected} distinct (id, topic) pairs are visible (fewer than every id when the writer gave
     * some up); false on timeout.
     */
    synchronized boolean awaitDistinct(long expected, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (distinct < expected && failure == null) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return false;
            }
            wait(Math.min(left, 20));
        }
        if (failure != null) {
            throw new IllegalStateException("the consumer failed: " + failure, failure);
        }
        return true;
    }

    /** Fraction of the expected (id, topic) pairs seen so far. */
    double progress() {
        return distinct / (double) ((long) count * seen.length);
    }

    long completedAtNanos() {
        return completedAtNanos;
    }

    long firstAtNanos() {
        return firstAtNanos;
    }

    long distinct() {
        return distinct;
    }

    long records() {
        return records;
    }

    long bytes() {
        return bytes;
    }

    long duplicates() {
        return duplicates;
    }

    long foreign() {
        return foreign;
    }

    /** First receive time of id {@code idBase + i}, 0 when not received. Only with keepReceiveTimes. */
    long[] receiveNanos() {
        return receiveNanos;
    }

    /** Record timestamp (broker append time on LogAppendTime topics) of id {@code idBase + i}. */
    long[] timestampMs() {
        return timestampMs;
    }

    /** Samples of the first records, as produced. Read after the run. */
    List<Sample> samples() {
        return samples;
    }

    double averageRecordBytes() {
        long s = 0;
        for (Sample x : samples) {
            s += x.size();
        }
        return samples.isEmpty() ? 0 : s / (double) samples.size();
    }

    @Override
    public void close() {
        closed = true;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
