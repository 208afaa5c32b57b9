package io.outboxrelay.connector.faults;

import static io.outboxrelay.connector.faults.FaultScenarios.log;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.faults.OutboxLedger.Subscription;
import io.outboxrelay.connector.integration.TestConnect;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Scenario 9: the worker running the mention-recovery companion task is SIGKILLed in the middle of a
 * recovery scan over thousands of unrouted messages, each mentioning two offline agents (two
 * {@code OWED} records per message). No message may be marked routed without both its records on the
 * topic and both owed rows written; after the restart, the start pass finishes the job, and the owed
 * rows stay exactly one per (agent, message). Guards against marking a message before its records
 * were acknowledged, which a crash turns into a mention lost for good.
 */
class MentionRecoveryKilledMidScanIT {
    private static final int BATCH = 50;
    private static final List<String> AGENTS = List.of("agent-1", "agent-2");
    private FaultWorker worker;

    @AfterEach
    void stopWorker() {
        if (worker != null) {
            worker.close();
        }
    }

    @Test
    void aScanKilledMidwayMarksNothingWithoutItsRecordsAndTheNextPassFinishes() {
        int messages = FaultScenarios.events(3_000, 20_000);
        TestDatabase db = TestPostgres.get().createDatabase("faults_mentions");
        db.execute("""
            INSERT INTO channels(id, name) VALUES ('c1', 'general');
            INSERT INTO topics(id, channel_id) VALUES ('t1', 'c1');
            INSERT INTO accounts(id, handle, kind) VALUES
              ('human-1', 'alice', 'human'), ('agent-1', 'ada', 'agent'), ('agent-2', 'bob', 'agent');
            INSERT INTO channel_members(channel_id, account_id, subscribed) VALUES
              ('c1', 'human-1', true), ('c1', 'agent-1', false), ('c1', 'agent-2', false);
            """);
        db.execute("INSERT INTO messages(id, topic_id, author_id, blocks, at_unix_ms) "
            + "SELECT 'm-' || g, 't1', 'human-1', '[{\"type\":\"text\",\"text\":\"hi @ada and @bob\"}]'::jsonb, "
            + "(extract(epoch FROM now()) * 1000)::bigint - 3600000 FROM generate_series(1, " + messages + ") g");

        db.throttleRowUpdates("messages", 1_000); // the kill lands mid-scan on any machine
        String name = "mentions-kill";
        String bootstrap = TestConnect.cluster().kafka().bootstrapServers();
        worker = new FaultWorker(name, bootstrap).start();
        String connector = "faults-" + name;
        String topic = connector + "-recovered";
        Map<String, String> cfg = FaultScenarios.relayConfig(db, List.of(Subscription.all("all", connector + "-relay")), 2);
        cfg.put("mentions.enabled", "true");
        cfg.put("mentions.topic", topic);
        cfg.put("mentions.batch.size", Integer.toString(BATCH));
        cfg.put("mentions.min.age.ms", "0");
        cfg.put("mentions.scan.interval.ms", "2000");
        worker.configureConnector(connector, cfg);

        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(120), () -> marked(db) >= messages / 5,
            () -> "scan did not progress: " + marked(db) + " marked\n" + worker.statusJson(connector));
        worker.kill();
        long markedAtKill = marked(db);
        log("SIGKILLed the worker mid-scan: %d of %d messages marked, %d owed rows", markedAtKill, messages,
            db.queryLong("SELECT count(*) FROM owed_mentions"));
        assertThat(markedAtKill).as("the kill must land mid-scan").isLessThan(messages);
        db.unthrottleRowUpdates("messages");
        FaultScenarios.logged("after SIGKILL", check(db, bootstrap, topic, messages)).assertStampsBacked();
        assertThat(db.queryLong("SELECT count(*) FROM messages m WHERE mentions_routed_at IS NOT NULL AND "
            + "(SELECT count(*) FROM owed_mentions o WHERE o.message_id = m.id) <> 2"))
            .as("messages marked without both owed rows").isZero();

        worker.start();
        FaultScenarios.awaitOrDescribe(Duration.ofSeconds(180), () -> marked(db) == messages,
            () -> "the next pass did not finish: " + marked(db) + " of " + messages + " marked\n" + worker.statusJson(connector));
        DeliveryChecker.Reports reports = FaultScenarios.logged("scenario 9 (mention recovery SIGKILLed mid-scan)",
            check(db, bootstrap, topic, messages));
        reports.assertNothingLost().assertDuplicatesAtMost((long) BATCH * AGENTS.size(),
            "the records of the one batch in flight");
        assertThat(db.queryLong("SELECT count(*) FROM owed_mentions")).isEqualTo((long) messages * AGENTS.size());
    }

    private static long marked(TestDatabase db) {
        return db.queryLong("SELECT count(*) FROM messages WHERE mentions_routed_at IS NOT NULL");
    }

    /**
     * The mention side of the one checker: every message owes one record per agent (id
     * {@code <message>/<agent>}); a marked message counts as "stamped" for each of them.
     */
    private static DeliveryChecker.Reports check(TestDatabase db, String bootstrap, String topic, int messages) {
        List<String> expected = new ArrayList<>();
        List<DeliveryChecker.Stamp> stamped = new ArrayList<>();
        for (List<Object> row : db.query("SELECT id, mentions_routed_at IS NOT NULL FROM messages")) {
            for (String agent : AGENTS) {
                String id = row.get(0) + "/" + agent;
                expected.add(id);
                if (Boolean.TRUE.equals(row.get(1))) {
                    stamped.add(DeliveryChecker.Stamp.of(id));
                }
            }
        }
        assertThat(expected).hasSize(messages * AGENTS.size());
        return new DeliveryChecker.Reports(List.of(DeliveryChecker.check(topic, expected, stamped,
            TopicContents.read(bootstrap, topic, TopicContents::mentionRecord))));
    }
}
