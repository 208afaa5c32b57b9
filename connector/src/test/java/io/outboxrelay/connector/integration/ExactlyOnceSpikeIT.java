package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorOffset;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The guard of the Connect facts the exactly-once design rests on (issue 25; docs/exactly-once.md, "What the
 * spike confirmed"), kept from the design's spike so that a Connect upgrade that changes them fails here: the
 * facts of Kafka Connect 4.3.1's exactly-once source support that the design relies on, on a real worker with
 * {@code exactly.once.source.support=enabled} and one broker. A trivial connector stands in for the relay:
 * it defines its own transaction boundaries (a commit requested on the last record of a poll batch), puts
 * a source offset on every record, and reads its committed offset back when it starts again. Guards the
 * design against a Connect that commits a batch's records without its offset (or the reverse), that
 * calls {@code commitRecord} before the transaction commits, or that commits a batch the task did not end;
 * and records the traps it found: an all-filtered batch gets no {@code commitRecord} until a later commit,
 * a partition key with two entries is found only in the order it was written, and a {@code validate()}
 * value on {@code exactly.once.support} replaces Connect's own message. Its own cluster: the shared one
 * ({@link TestConnect}) runs without exactly-once.
 */
class ExactlyOnceSpikeIT {
    private static final String GROUP = "eos-spike";
    private static final String TOPIC = "eos-spike-out";
    private static final String DROPPED_TOPIC = "eos-spike-dropped";
    /** One key: its JSON form, the offset's key in the offsets topic, cannot depend on a map's iteration order. */
    private static final Map<String, Object> PARTITION = Map.of("outbox.slot", "events#0");
    private static final Map<String, Object> NEVER_WRITTEN = Map.of("outbox.slot", "events#7");
    /** Two keys, written in this order; read back in this order and in the other one. */
    private static final Map<String, Object> TWO_KEYS = ordered("outbox", "events", "relay", 0);
    private static final Map<String, Object> TWO_KEYS_REVERSED = ordered("relay", 0, "outbox", "events");

    /** What the tasks saw, in order; one cluster and one test at a time write it. */
    static final List<String> EVENTS = Collections.synchronizedList(new ArrayList<>());

    /** A copy of what the tasks recorded so far: they add to it on their own threads while a test reads it. */
    private static List<String> events() {
        synchronized (EVENTS) {
            return List.copyOf(EVENTS);
        }
    }
    static final AtomicInteger WRITER_STARTS = new AtomicInteger();
    static final AtomicInteger READER_STARTS = new AtomicInteger();

    private static EmbeddedConnectCluster cluster;

    @BeforeAll
    static void startCluster() {
        Map<String, String> worker = new HashMap<>();
        worker.put("exactly.once.source.support", "enabled");
        worker.put("group.id", GROUP);
        worker.put("scheduled.rebalance.max.delay.ms", "0");
        worker.put("plugin.discovery", "hybrid_warn"); // the spike's connector ships no ServiceLoader manifest
        Properties broker = new Properties();
        // one broker: the transaction state log cannot have its default replication factor of 3
        broker.put("transaction.state.log.replication.factor", "1");
        broker.put("transaction.state.log.min.isr", "1");
        cluster = new EmbeddedConnectCluster.Builder()
            .name("eos-spike")
            .numWorkers(1)
            .workerProps(worker)
            .brokerProps(broker)
            .build();
        cluster.start();
        cluster.kafka().createTopic(TOPIC, 1);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.stop();
        }
    }

    private static Map<String, String> connectorConfig(String eos) {
        Map<String, String> cfg = new HashMap<>();
        cfg.put("connector.class", SpikeConnector.class.getName());
        cfg.put("tasks.max", "1");
        cfg.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        cfg.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        cfg.put("exactly.once.support", "required");
        cfg.put("transaction.boundary", "connector");
        cfg.put("spike.eos", eos);
        cfg.put("transforms", "drop");
        cfg.put("transforms.drop.type", "org.apache.kafka.connect.transforms.Filter");
        cfg.put("transforms.drop.predicate", "isDropped");
        cfg.put("predicates", "isDropped");
        cfg.put("predicates.isDropped.type", "org.apache.kafka.connect.transforms.predicates.TopicNameMatches");
        cfg.put("predicates.isDropped.pattern", DROPPED_TOPIC);
        return cfg;
    }

    /**
     * Connect adds its own error to {@code exactly.once.support} when the connector answers UNSUPPORTED; a
     * value the connector's {@code validate()} returns for that same key replaces Connect's (the last value
     * for a name wins), while a reason on another key stands beside it.
     */
    @Test
    void anUnsupportedAnswerFailsValidationAndAReasonOnTheSameKeyHidesConnectsMessage() {
        String connects = "The connector does not support exactly-once semantics with the provided configuration.";
        ConfigInfos sameKey = cluster.validateConnectorConfig(SpikeConnector.class.getName(),
            named("eos-spike-validate", connectorConfig("unsupported")));
        log("validate, UNSUPPORTED, reason on exactly.once.support: error_count %d, exactly.once.support %s",
            sameKey.errorCount(), errorsOn(sameKey, "exactly.once.support"));
        assertThat(errorsOn(sameKey, "exactly.once.support")).containsExactly(SpikeConnector.REASON);
        assertThat(sameKey.errorCount()).isEqualTo(1);

        ConfigInfos otherKey = cluster.validateConnectorConfig(SpikeConnector.class.getName(),
            named("eos-spike-validate", connectorConfig("unsupported-elsewhere")));
        log("validate, UNSUPPORTED, reason on transaction.boundary: error_count %d, exactly.once.support %s,"
            + " transaction.boundary %s", otherKey.errorCount(), errorsOn(otherKey, "exactly.once.support"),
            errorsOn(otherKey, "transaction.boundary"));
        assertThat(errorsOn(otherKey, "exactly.once.support")).containsExactly(connects);
        assertThat(errorsOn(otherKey, "transaction.boundary")).containsExactly(SpikeConnector.REASON);
        assertThat(otherKey.errorCount()).isEqualTo(2);

        ConfigInfos accepted = cluster.validateConnectorConfig(SpikeConnector.class.getName(),
            named("eos-spike-validate", connectorConfig("supported")));
        assertThat(accepted.errorCount()).as("%s", accepted).isZero();
    }

    @Test
    void aBatchsRecordsAndItsOffsetCommitTogetherAndCommitRecordFollowsTheCommit() throws Exception {
        EVENTS.clear();
        String name = "eos-spike";
        cluster.configureConnector(name, connectorConfig("supported"));

        // incarnation 1 returns batches A, B (all filtered), C (last record filtered) and D (no commit asked for)
        await().atMost(Duration.ofSeconds(60)).until(() -> EVENTS.contains("w1 poll 5"));
        // D was sent: a read_uncommitted reader sees its records in the log, its transaction still open
        await().atMost(Duration.ofSeconds(30))
            .until(() -> values(TOPIC, "read_uncommitted", 7, Duration.ofSeconds(2)).containsAll(List.of("D1", "D2")));
        // another connector's task, started while D's transaction is open, reads the same partition: nothing
        // (offsets are kept per connector); an open transaction holds no offsets yet, so the read does not wait
        Map<String, String> reader = connectorConfig("supported");
        reader.put("spike.role", "reader");
        cluster.configureConnector("eos-spike-reader", reader);
        await().atMost(Duration.ofSeconds(30)).until(() -> events().stream().anyMatch(e -> e.startsWith("r1 start")));
        assertThat(events()).contains("r1 start transactionContext=present offset=null neverWritten=null twoKeys=null"
            + " twoKeysReversed=null");
        cluster.deleteConnector("eos-spike-reader");

        List<String> first = events().stream().filter(e -> e.startsWith("w")).toList();
        log("incarnation 1 saw:%n  %s", String.join("\n  ", first));

        // commitRecord comes on the task's own thread, after the commit, before the next poll
        assertThat(between(first, "w1 poll 1 returned", "w1 poll 2")).containsExactly(
            "w1 commitRecord A1 " + TOPIC + "-0@0 same-thread",
            "w1 commitRecord A2 " + TOPIC + "-0@1 same-thread",
            "w1 commitRecord A3 " + TOPIC + "-0@2 same-thread",
            "w1 commitRecord A4 " + TOPIC + "-0@3 same-thread",
            "w1 commit()");
        // an all-filtered batch gets no commitRecord until a later transaction commits
        assertThat(between(first, "w1 poll 2 returned", "w1 poll 3")).containsExactly("w1 commit()");
        assertThat(between(first, "w1 poll 3 returned", "w1 poll 4")).containsExactlyInAnyOrder(
            "w1 commitRecord B1 null same-thread",
            "w1 commitRecord B2 null same-thread",
            "w1 commitRecord C1 " + TOPIC + "-0@5 same-thread",
            "w1 commitRecord C2 null same-thread",
            "w1 commit()");
        // D's commit was never asked for: no commitRecord, no commit()
        assertThat(between(first, "w1 poll 4 returned", "w1 poll 5")).isEmpty();

        // a restart: the open transaction is not committed at stop, and is aborted when the next producer starts
        cluster.restartTask(name, 0);
        await().atMost(Duration.ofSeconds(60)).until(() -> EVENTS.contains("w2 poll 2"));
        List<String> writer = events().stream().filter(e -> e.startsWith("w")).toList();
        List<String> second = writer.subList(first.size(), writer.size());
        log("incarnation 2 saw:%n  %s", String.join("\n  ", second));

        // the offset read back is C1's: C2 was filtered (its offset is not written), D's never committed
        // and a partition key with two entries is found only when read back with its entries in the written order
        String started = "w2 start transactionContext=present offset={rec=C1} neverWritten=null"
            + " twoKeys={rec=A4} twoKeysReversed=null";
        assertThat(second).contains("w1 stop", started);
        assertThat(second.indexOf("w1 stop")).isLessThan(second.indexOf(started));

        List<String> committed = values(TOPIC, "read_committed", 6, Duration.ofSeconds(10));
        List<String> uncommitted = values(TOPIC, "read_uncommitted", 8, Duration.ofSeconds(10));
        log("read_committed: %s%nread_uncommitted: %s", committed, uncommitted);
        assertThat(committed).containsExactly("A1", "A2", "A3", "A4", "C1", "E1");
        assertThat(uncommitted).containsExactly("A1", "A2", "A3", "A4", "C1", "D1", "D2", "E1");

        try (Admin admin = cluster.kafka().createAdminClient()) {
            List<String> ids = admin.listTransactions().all().get().stream()
                .map(TransactionListing::transactionalId).sorted().toList();
            log("transactional ids: %s", ids);
            assertThat(ids).contains(GROUP + "-" + name + "-0");
        }
        List<ConnectorOffset> offsets = cluster.connectorOffsets(name).offsets();
        log("GET /connectors/%s/offsets: %s", name, offsets);
        // the REST API rebuilds each key from its JSON (a HashMap) and looks it up again: the two-entry key,
        // written in the other order, shows no offset at all
        assertThat(offsets).anySatisfy(o -> {
            assertThat(o.partition()).isEqualTo(PARTITION);
            assertThat(o.offset()).isEqualTo(Map.of("rec", "E1"));
        });
        assertThat(offsets).anySatisfy(o -> {
            assertThat(o.partition()).containsOnlyKeys("outbox", "relay");
            assertThat(o.offset()).isNull();
        });
        cluster.deleteConnector(name);
    }

    private static Map<String, String> named(String name, Map<String, String> cfg) {
        cfg.put("name", name);
        return cfg;
    }

    private static List<String> between(List<String> events, String from, String to) {
        int start = events.indexOf(from);
        int end = events.indexOf(to);
        assertThat(start).as("%s in %s", from, events).isNotNegative();
        assertThat(end).as("%s in %s", to, events).isGreaterThan(start);
        return events.subList(start + 1, end);
    }

    private static List<String> errorsOn(ConfigInfos infos, String key) {
        List<String> out = new ArrayList<>();
        for (ConfigInfo info : infos.configs()) {
            if (info.configValue() != null && key.equals(info.configValue().name())) {
                out.addAll(info.configValue().errors());
            }
        }
        return out;
    }

    /** Every value on {@code topic} at this isolation level, reading until {@code expected} or the timeout. */
    private static List<String> values(String topic, String isolation, int expected, Duration timeout) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "spike-" + System.nanoTime());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.kafka().createConsumerAndSubscribeTo(props, topic)) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    private static Map<String, Object> ordered(String k1, Object v1, String k2, Object v2) {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put(k1, v1);
        m.put(k2, v2);
        return m;
    }

    private static void log(String format, Object... args) {
        System.out.println("[eos-spike] " + String.format(format, args));
    }

    /** Says what {@code spike.eos} tells it to; defines its own transaction boundaries. */
    public static class SpikeConnector extends SourceConnector {
        static final String REASON = "spike: the reason the connector gives for UNSUPPORTED";
        private static final ConfigDef CONFIG = new ConfigDef()
            .define("spike.eos", ConfigDef.Type.STRING, "supported", ConfigDef.Importance.LOW, "spike answer");
        private Map<String, String> props;

        @Override
        public void start(Map<String, String> props) {
            this.props = props;
        }

        @Override
        public Class<? extends Task> taskClass() {
            return SpikeTask.class;
        }

        @Override
        public List<Map<String, String>> taskConfigs(int maxTasks) {
            return List.of(props);
        }

        @Override
        public void stop() {
        }

        @Override
        public ConfigDef config() {
            return CONFIG;
        }

        @Override
        public Config validate(Map<String, String> connectorConfigs) {
            Config config = super.validate(connectorConfigs);
            String answer = connectorConfigs.get("spike.eos");
            if (answer.startsWith("unsupported")) {
                ConfigValue reason = new ConfigValue(answer.equals("unsupported") ? "exactly.once.support"
                    : "transaction.boundary");
                reason.addErrorMessage(REASON);
                config.configValues().add(reason);
            }
            return config;
        }

        @Override
        public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
            return connectorConfig.get("spike.eos").startsWith("unsupported")
                ? ExactlyOnceSupport.UNSUPPORTED : ExactlyOnceSupport.SUPPORTED;
        }

        @Override
        public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> connectorConfig) {
            return ConnectorTransactionBoundaries.SUPPORTED;
        }

        @Override
        public String version() {
            return "spike";
        }
    }

    /**
     * Incarnation 1 returns A (3 records, and a fourth in a partition with a two-entry key), B (2 records a
     * transform filters), C (one kept, one filtered) and D (2 records, no commit asked for); incarnation 2
     * returns E. Every record has its own offset. With {@code spike.role=reader} it only reads offsets.
     */
    public static class SpikeTask extends SourceTask {
        private boolean reader;
        private String label;
        private int incarnation;
        private int polls;
        private volatile Thread pollThread;

        @Override
        public void start(Map<String, String> props) {
            reader = "reader".equals(props.get("spike.role"));
            incarnation = (reader ? READER_STARTS : WRITER_STARTS).incrementAndGet();
            label = (reader ? "r" : "w") + incarnation;
            TransactionContext tx = context.transactionContext();
            Map<Map<String, Object>, Map<String, Object>> read = context.offsetStorageReader()
                .offsets(List.of(PARTITION, NEVER_WRITTEN, TWO_KEYS, TWO_KEYS_REVERSED));
            event("start transactionContext=" + (tx == null ? "null" : "present") + " offset=" + read.get(PARTITION)
                + " neverWritten=" + read.get(NEVER_WRITTEN) + " twoKeys=" + read.get(TWO_KEYS)
                + " twoKeysReversed=" + offsetOf(TWO_KEYS_REVERSED));
        }

        @Override
        public List<SourceRecord> poll() throws InterruptedException {
            pollThread = Thread.currentThread();
            polls++;
            event("poll " + polls);
            List<SourceRecord> batch = batch();
            if (batch == null) {
                Thread.sleep(100);
                return null;
            }
            if (!(incarnation == 1 && polls == 4)) { // D: no commit asked for
                context.transactionContext().commitTransaction(batch.get(batch.size() - 1));
            }
            event("poll " + polls + " returned");
            return batch;
        }

        private List<SourceRecord> batch() {
            if (reader) {
                return null;
            }
            if (incarnation == 1) {
                return switch (polls) {
                    case 1 -> List.of(record(TOPIC, "A1"), record(TOPIC, "A2"), record(TOPIC, "A3"),
                        record(TWO_KEYS, TOPIC, "A4"));
                    case 2 -> List.of(record(DROPPED_TOPIC, "B1"), record(DROPPED_TOPIC, "B2"));
                    case 3 -> List.of(record(TOPIC, "C1"), record(DROPPED_TOPIC, "C2"));
                    case 4 -> List.of(record(TOPIC, "D1"), record(TOPIC, "D2"));
                    default -> null;
                };
            }
            return polls == 1 ? List.of(record(TOPIC, "E1")) : null;
        }

        private static SourceRecord record(String topic, String id) {
            return record(PARTITION, topic, id);
        }

        private static SourceRecord record(Map<String, Object> partition, String topic, String id) {
            return new SourceRecord(partition, Map.of("rec", id), topic, null, null, null, Schema.STRING_SCHEMA, id);
        }

        /** Read alone: the two two-key maps are equal, so one offsets() call would return one entry for both. */
        private Map<String, Object> offsetOf(Map<String, Object> partition) {
            return context.offsetStorageReader().offset(partition);
        }

        @Override
        public void commitRecord(SourceRecord record, RecordMetadata metadata) {
            String where = metadata == null ? "null"
                : metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset();
            Thread current = Thread.currentThread();
            event("commitRecord " + record.value() + " " + where + " "
                + (current == pollThread ? "same-thread" : "thread " + current.getName()));
        }

        @Override
        public void commit() {
            event("commit()");
        }

        @Override
        public void stop() {
            event("stop");
        }

        @Override
        public String version() {
            return "spike";
        }

        private void event(String what) {
            EVENTS.add(label + " " + what);
        }
    }

}
