package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Per-subject order with several relay tasks: subjects are partitioned over the tasks by
 * {@code hashtext(subject)}, so one task owns a subject and each topic receives a subject's events in
 * {@code seq} order while 8 writers commit concurrently. Each writer owns its subjects, as an
 * application serialises an aggregate's events; nothing is lost and nothing duplicated.
 */
class PerSubjectOrderAcrossTasksIT {
    private static final String CONNECTOR = "order-4-tasks";
    private static final int WRITERS = 8;
    private static final int EVENTS = 50_000;
    private static final int SUBJECTS = 500;

    @AfterAll
    static void stop() {
        TestConnect.cluster().deleteConnector(CONNECTOR);
    }

    @Test
    void fourTasksEightWritersFiftyThousandEventsKeepSeqOrderPerSubjectOnEveryTopic() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("order_4_tasks");
        TestConnect.cluster().kafka().createTopic("order-all", 6);
        TestConnect.cluster().kafka().createTopic("order-even", 6);
        Map<String, String> cfg = TestConnect.relayConfig(db, "all,even", 4);
        cfg.put("subscription.all.topic", "order-all");
        cfg.put("subscription.even.topic", "order-even");
        cfg.put("subscription.even.event.types", "thing.even");
        TestConnect.cluster().configureConnector(CONNECTOR, cfg);
        TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(CONNECTOR, 4, "4 relay tasks");

        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        List<Future<?>> done = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            done.add(writers.submit(() -> {
                try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO events(type, subject, payload) VALUES (?, ?, '{}')")) {
                    for (int i = writer; i < EVENTS; i += WRITERS) {
                        // writer w owns the subjects s with s % 8 == w: 500 subjects in all
                        int owned = (SUBJECTS - writer + WRITERS - 1) / WRITERS;
                        int subject = writer + WRITERS * ((i / WRITERS) % owned);
                        ps.setString(1, i % 2 == 0 ? "thing.even" : "thing.odd");
                        ps.setString(2, "subject-" + subject);
                        ps.addBatch();
                        if ((i / WRITERS) % 25 == 0) {
                            ps.executeBatch(); // many small commits, interleaved across writers
                        }
                    }
                    ps.executeBatch();
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        writers.shutdown();

        await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofSeconds(1))
            .until(() -> db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL") == 0);
        assertThat(db.queryLong("SELECT count(*) FROM events")).isEqualTo(EVENTS);
        assertOrderedAndComplete("order-all", EVENTS, SUBJECTS);
        // even events come from the even writers only, which own half of the subjects
        assertOrderedAndComplete("order-even", EVENTS / 2, SUBJECTS / 2);
    }

    private static void assertOrderedAndComplete(String topic, int expected, int subjects) {
        assertThat(TestConnect.countRecords(topic)).as("records on %s", topic).isEqualTo(expected);
        List<TestConnect.Received> received = TestConnect.consume(expected, Duration.ofSeconds(90), topic);
        assertThat(received).hasSize(expected);
        Set<Long> seen = new HashSet<>();
        Map<String, Long> last = new HashMap<>();
        for (TestConnect.Received r : received) {
            assertThat(seen.add(r.seq())).as("seq %d twice on %s", r.seq(), topic).isTrue();
            Long previous = last.put(r.key(), r.seq());
            if (previous != null) {
                assertThat(r.seq()).as("subject %s on %s", r.key(), topic).isGreaterThan(previous);
            }
        }
        assertThat(last).hasSize(subjects);
    }
}
