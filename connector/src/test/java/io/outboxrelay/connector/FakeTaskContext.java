package io.outboxrelay.connector;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * What a relay task sees of Connect's exactly-once machinery in unit tests: the connector's committed source
 * offsets (an in-memory offsets topic, values as they read back from JSON), a {@link TransactionContext} that
 * records what the task asks (with connector boundaries), and {@link #commit}, which does what Connect does
 * when a transaction (or an at-least-once offset commit) covers the first records of a list
 * (docs/exactly-once.md, 1.4, 1.5, 1.10).
 */
final class FakeTaskContext implements SourceTaskContext {
    /** The committed offsets: the offsets topic as a reader sees it. */
    final Map<Map<String, Object>, Map<String, Object>> committed = new HashMap<>();
    /** Every partition set the task asked for. */
    final List<Collection<? extends Map<String, ?>>> reads = new ArrayList<>();
    final RecordingTransactions transactions;
    private long nextOffset;

    /** @param connectorBoundaries whether the task gets a transaction context (transaction.boundary=connector) */
    FakeTaskContext(boolean connectorBoundaries) {
        this.transactions = connectorBoundaries ? new RecordingTransactions() : null;
    }

    /** What the task asked of its transactions. */
    static final class RecordingTransactions implements TransactionContext {
        final List<SourceRecord> commitsOn = new ArrayList<>();
        int batchCommits;
        int aborts;

        @Override
        public void commitTransaction() {
            batchCommits++;
        }

        @Override
        public void commitTransaction(SourceRecord record) {
            commitsOn.add(record);
        }

        @Override
        public void abortTransaction() {
            aborts++;
        }

        @Override
        public void abortTransaction(SourceRecord record) {
            aborts++;
        }
    }

    @Override
    public Map<String, String> configs() {
        return Map.of();
    }

    @Override
    public OffsetStorageReader offsetStorageReader() {
        return new OffsetStorageReader() {
            @Override
            public <T> Map<String, Object> offset(Map<String, T> partition) {
                return offsets(List.of(partition)).get(partition);
            }

            @Override
            @SuppressWarnings("unchecked")
            public <T> Map<Map<String, T>, Map<String, Object>> offsets(Collection<Map<String, T>> partitions) {
                reads.add(List.copyOf(partitions));
                Map<Map<String, T>, Map<String, Object>> out = new HashMap<>();
                for (Map<String, T> p : partitions) {
                    Map<String, Object> v = committed.get(p);
                    if (v != null) {
                        out.put(p, v);
                    }
                }
                return out;
            }
        };
    }

    @Override
    public TransactionContext transactionContext() {
        return transactions;
    }

    @Override
    public PluginMetrics pluginMetrics() {
        return null;
    }

    /**
     * Commits the first {@code sent} records of {@code list} with the offset of the last of them that was not
     * filtered (serialised: read back as JSON gives it), then acknowledges them to the task, a filtered one with
     * null metadata, as Connect does after a transaction's commit.
     */
    void commit(SourceTask task, List<SourceRecord> list, int sent, Set<Integer> filtered) throws InterruptedException {
        for (int i = sent - 1; i >= 0; i--) {
            if (!filtered.contains(i)) {
                SourceRecord last = list.get(i);
                committed.put(Map.copyOf(last.sourcePartition()), asRead(last.sourceOffset()));
                break;
            }
        }
        acknowledge(task, list.subList(0, sent), filtered);
    }

    /** The whole list committed, nothing filtered. */
    void commit(SourceTask task, List<SourceRecord> list) throws InterruptedException {
        commit(task, list, list.size(), Set.of());
    }

    /** Acknowledgements alone: the records were sent, no offset committed (yet). */
    void acknowledge(SourceTask task, List<SourceRecord> records, Set<Integer> filtered) throws InterruptedException {
        for (int i = 0; i < records.size(); i++) {
            RecordMetadata m = filtered.contains(i) ? null
                : new RecordMetadata(new TopicPartition(records.get(i).topic(), 0), nextOffset++, 0, 0, 0, 0);
            task.commitRecord(records.get(i), m);
        }
    }

    /** An offset value as the JSON converter reads it back: integers as longs. */
    private static Map<String, Object> asRead(Map<String, ?> offset) {
        Map<String, Object> out = new LinkedHashMap<>();
        offset.forEach((k, v) -> out.put(k, v instanceof Integer i ? (Object) i.longValue() : v));
        return out;
    }
}
