package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.Json;
import io.outboxrelay.testsupport.MutableClock;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The mention task's share of exactly-once delivery (docs/exactly-once.md, 3.12 and 4.16): its records name
 * the messages complete at them, a task that starts marks the messages its committed offset names before its
 * first pass instead of publishing them again, the {@code (seq, id)} pair guards against a table created again,
 * and with connector-defined boundaries it ends one transaction per list and is not stalled by a list Connect
 * filtered whole.
 */
class MentionExactlyOnceTest {
    private static final RecordMetadata ACK = new RecordMetadata(new TopicPartition("mentions.recovered", 0), 0, 0, 0, 0, 0);
    private final MutableClock clock = new MutableClock(Instant.parse("2026-05-01T12:00:00Z"));
    private final FakeMentionStore store = new FakeMentionStore();
    private final Map<Map<String, Object>, Map<String, Object>> committed = new HashMap<>();
    private final List<Object> reads = new ArrayList<>();
    private final List<SourceRecord> commitsOn = new ArrayList<>();
    private int otherRequests;
    private MentionRecoveryTask task;

    @AfterEach
    void stop() {
        if (task != null) {
            task.stop();
        }
    }

    private void start(boolean connectorBoundaries, String... overrides) {
        task = new MentionRecoveryTask(clock, (config, t) -> new MentionRecoveryTask.OpenedDatabase(store, () -> { }),
            Duration.ofMillis(1));
        task.initialize(context(connectorBoundaries));
        Map<String, String> props = MentionRecoveryTaskTest.connectorProps();
        for (int i = 0; i < overrides.length; i += 2) {
            props.put(overrides[i], overrides[i + 1]);
        }
        task.start(props);
        store.addAgent("ch", "a-ada", "ada", false, false);
        store.addAgent("ch", "a-bob", "bob", true, false);
    }

    private List<SourceRecord> pollForRecords() throws InterruptedException {
        return MentionRecoveryTaskTest.pollForRecords(task, store);
    }

    private void pollSome() throws InterruptedException {
        for (int i = 0; i < 20; i++) {
            task.poll();
        }
    }

    private static String mentioning(String text) {
        return "[{\"type\":\"text\",\"text\":\"" + text + "\"}]";
    }

    /** The bytes of the offset as Connect's schemaless JSON converter writes it to the offsets topic. */
    private static int jsonBytes(Map<String, ?> offset) {
        String json = Json.write(g -> {
            g.writeStartObject();
            for (Map.Entry<String, ?> e : offset.entrySet()) {
                if (e.getValue() instanceof Number n) {
                    g.writeNumberField(e.getKey(), n.longValue());
                } else {
                    g.writeStringField(e.getKey(), e.getValue().toString());
                }
            }
            g.writeEndObject();
        });
        return json.getBytes(StandardCharsets.UTF_8).length;
    }

    private static List<MentionOffsets.Named> named(SourceRecord record) {
        @SuppressWarnings("unchecked")
        Map<String, Object> offset = (Map<String, Object>) record.sourceOffset();
        return MentionOffsets.parse(offset);
    }

    @Test
    void eachRecordNamesTheMessagesCompleteAtItAndNotThoseKnownUndelivered() throws Exception {
        store.addMessage("m1", 1, 0, "ch", "u-1", mentioning("@ada @bob"));
        store.addMessage("m,2", 2, 0, "ch", "u-1", mentioning("@ada"));
        start(false);
        List<SourceRecord> records = pollForRecords();

        assertThat(records).hasSize(3);
        assertThat(records).allSatisfy(r -> assertThat(r.sourcePartition()).isEqualTo(Map.of("mentions", "messages")));
        assertThat(named(records.get(1))).containsExactly(new MentionOffsets.Named(1, "m1"));
        task.commitRecord(records.get(0), null); // filtered: m1 is not delivered, and stays unrouted
        assertThat(named(records.get(0))).isEmpty();
        assertThat(named(records.get(2))).as("an id with a comma survives").containsExactly(new MentionOffsets.Named(2, "m,2"));
    }

    /**
     * Found by review: the offset of a list's last record names every routed message of it, and nothing bounded its
     * size; an offset over the producer's 1 MiB failed the transaction, and every restart planned the same batch.
     */
    @Test
    void theOffsetOfAListFitsTheOffsetsTopicWhateverTheIdsAndTheRestComeWithTheNextLists() throws Exception {
        String id = "m".repeat(300_000);
        for (int i = 1; i <= 4; i++) {
            store.addMessage(id + i, i, 0, "ch", "u-1", mentioning("@ada"));
        }
        start(false);
        List<String> published = new ArrayList<>();
        for (int list = 0; list < 4 && published.size() < 4; list++) {
            List<SourceRecord> records = pollForRecords();
            assertThat(records).as("each message alone: two names would pass the cap").hasSize(1);
            assertThat(jsonBytes(records.get(0).sourceOffset())).isLessThan(1_000_000);
            records.forEach(r -> {
                published.add(((org.apache.kafka.connect.data.Struct) r.value()).getString("message_id"));
                task.commitRecord(r, ACK);
            });
        }
        assertThat(published).containsExactly(id + 1, id + 2, id + 3, id + 4);
    }

    /** 4.16 */
    @Test
    void theMessagesACommittedOffsetNamesAreMarkedBeforeTheStartPassAndNotPublishedAgain() throws Exception {
        store.addMessage("m1", 1, 0, "ch", "u-1", mentioning("@ada"));
        store.addMessage("m2", 2, 0, "ch", "u-1", mentioning("@ada"));
        committed.put(Map.of("mentions", "messages"), Map.of("v", 1L, "pending", "[[1,\"m1\"]]"));
        start(false);
        List<SourceRecord> records = pollForRecords();

        assertThat(store.calls.get(0)).isEqualTo("markNamed:1/m1");
        assertThat(store.calls.indexOf("read")).isPositive();
        assertThat(store.routedAt("m1")).isNotNull();
        assertThat(records).extracting(r -> ((org.apache.kafka.connect.data.Struct) r.value()).getString("message_id"))
            .containsExactly("m2");
    }

    @Test
    void aNamedPairThatNoLongerMatchesIsNotMarked() throws Exception {
        store.addMessage("m1", 5, 0, "ch", "u-1", mentioning("@ada")); // the table was created again: m1 is new
        committed.put(Map.of("mentions", "messages"), Map.of("v", 1L, "pending", "[[1,\"m1\"]]"));
        start(false);
        assertThat(pollForRecords()).hasSize(1);
        assertThat(store.routedAt("m1")).isNull();
    }

    @Test
    void aFailingMarkOfTheNamedMessagesIsRetriedAndNoPassRunsMeanwhile() throws Exception {
        store.addMessage("m1", 1, 0, "ch", "u-1", mentioning("@ada"));
        committed.put(Map.of("mentions", "messages"), Map.of("v", 1L, "pending", "[[1,\"m1\"]]"));
        store.failNextMark = new SQLException("terminating connection due to administrator command", "57P01");
        start(false);
        assertThat(task.poll()).isNull();
        assertThat(store.calls).containsExactly("markNamed:1/m1");

        clock.advance(Duration.ofSeconds(5));
        pollSome();
        assertThat(store.routedAt("m1")).isNotNull();
        assertThat(store.calls).contains("read");
    }

    @Test
    void withConnectorBoundariesTheCommitIsAskedOnEachListsLastRecordAndAWhollyFilteredListDoesNotStallTheTask()
        throws Exception {
        store.addMessage("m1", 1, 0, "ch", "u-1", mentioning("@ada @bob"));
        start(true, "mentions.batch.size", "1");
        List<SourceRecord> records = pollForRecords();
        assertThat(commitsOn).containsExactly(records.get(1));
        assertThat(records.get(0).sourceOffset()).isSameAs(records.get(1).sourceOffset());
        assertThat(otherRequests).isZero();

        store.addMessage("m2", 2, 0, "ch", "u-1", mentioning("@ada"));
        // Connect filtered both records: no commit, no acknowledgement; the task carries on with its pass
        List<SourceRecord> next = pollForRecords();
        assertThat(next).hasSize(1);
        assertThat(store.routedAt("m1")).as("undelivered, as a null acknowledgement says").isNull();
    }

    /**
     * The same under poll boundaries (found by review: the task waited for ever), once Connect showed that it commits
     * each list: a commit() on the poll thread (this test's thread), which an exactly-once worker makes after every
     * list, an all-filtered one too.
     */
    @Test
    void withPollBoundariesAWhollyFilteredListDoesNotStallTheTaskOnceCommitsComeOnItsThread() throws Exception {
        store.addMessage("m1", 1, 0, "ch", "u-1", mentioning("@ada"));
        start(false, "mentions.batch.size", "1", "exactly.once.support", "required");
        assertThat(pollForRecords()).hasSize(1); // filtered: Connect acknowledges nothing
        task.commit();

        store.addMessage("m2", 2, 0, "ch", "u-1", mentioning("@ada"));
        List<SourceRecord> next = null;
        for (int i = 0; i < 20 && next == null; i++) {
            next = task.poll();
            task.commit(); // after every list, a null one too, as an exactly-once worker does
        }
        assertThat(next).hasSize(1);
        assertThat(store.routedAt("m1")).as("undelivered, as a null acknowledgement says").isNull();
    }

    /** The control: an at-least-once worker commits from another thread; the task waits for the acknowledgement. */
    @Test
    void commitsFromAnotherThreadProveNothingAndTheTaskWaitsForTheAcknowledgement() throws Exception {
        store.addMessage("m1", 1, 0, "ch", "u-1", mentioning("@ada"));
        start(false, "mentions.batch.size", "1", "exactly.once.support", "required");
        List<SourceRecord> first = pollForRecords();
        Thread committer = new Thread(task::commit);
        committer.start();
        committer.join();
        store.addMessage("m2", 2, 0, "ch", "u-1", mentioning("@ada"));

        pollSome();
        assertThat(store.calls.stream().filter("read"::equals)).as("no read while m1 is unacknowledged").hasSize(1);
        task.commitRecord(first.get(0), ACK);
        assertThat(pollForRecords()).hasSize(1);
    }

    /**
     * A batch cut short (the read deferred m3, past its budget of blocks) under connector transaction boundaries:
     * each list is one transaction, committed on its last record, and each record's offset names only the messages
     * of its own list, so a commit of the first never marks m3, which is published once, with the second.
     */
    @Test
    void aBatchCutShortIsItsOwnTransactionAndItsOffsetsNameOnlyItsMessages() throws Exception {
        for (int seq = 1; seq <= 3; seq++) {
            store.addMessage("m" + seq, seq, 0, "ch", "u-1", mentioning("@ada"));
        }
        store.blocksBudget = 2L * mentioning("@ada").length();
        start(true);

        List<SourceRecord> first = pollForRecords();
        assertThat(first).hasSize(2);
        assertThat(commitsOn).containsExactly(first.get(1));
        assertThat(named(first.get(1))).containsExactly(new MentionOffsets.Named(1, "m1"), new MentionOffsets.Named(2, "m2"));
        first.forEach(r -> task.commitRecord(r, ACK));

        List<SourceRecord> second = pollForRecords();
        assertThat(second).hasSize(1);
        assertThat(commitsOn).containsExactly(first.get(1), second.get(0));
        assertThat(named(second.get(0))).containsExactly(new MentionOffsets.Named(3, "m3"));
        assertThat(store.routedAt("m1")).isNotNull();
        assertThat(store.routedAt("m3")).as("not before its own record is acknowledged").isNull();
    }

    /** Connect trims a setting's value before it reads it, so " ALL " is errors.tolerance=all for this task too. */
    @ParameterizedTest
    @ValueSource(strings = {"all", " ALL "})
    void underErrorsToleranceAllTheOffsetIsTheOldOneAndNothingIsRead(String tolerance) throws Exception {
        store.addMessage("m1", 7, 0, "ch", "u-1", mentioning("@ada"));
        start(false, "errors.tolerance", tolerance);
        assertThat(pollForRecords().get(0).sourceOffset()).isEqualTo(Map.of("seq", 7L));
        assertThat(reads).isEmpty();
    }

    private SourceTaskContext context(boolean connectorBoundaries) {
        TransactionContext transactions = new TransactionContext() {
            @Override
            public void commitTransaction() {
                otherRequests++;
            }

            @Override
            public void commitTransaction(SourceRecord record) {
                commitsOn.add(record);
            }

            @Override
            public void abortTransaction() {
                otherRequests++;
            }

            @Override
            public void abortTransaction(SourceRecord record) {
                otherRequests++;
            }
        };
        OffsetStorageReader reader = new OffsetStorageReader() {
            @Override
            public <T> Map<String, Object> offset(Map<String, T> partition) {
                reads.add(partition);
                return committed.get(partition);
            }

            @Override
            public <T> Map<Map<String, T>, Map<String, Object>> offsets(Collection<Map<String, T>> partitions) {
                throw new UnsupportedOperationException();
            }
        };
        return new SourceTaskContext() {
            @Override
            public Map<String, String> configs() {
                return Map.of();
            }

            @Override
            public OffsetStorageReader offsetStorageReader() {
                return reader;
            }

            @Override
            public TransactionContext transactionContext() {
                return connectorBoundaries ? transactions : null;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return null;
            }
        };
    }
}
