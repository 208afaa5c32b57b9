package io.outboxrelay.bench;

import java.util.List;
import java.util.Map;

/**
 * Mention recovery: {@code messages} chat messages committed but never routed (the server "crashed"),
 * each mentioning one offline agent member outside the delivery sweep, so each is owed: an
 * {@code owed_mentions} row and one {@code OWED} record. The connector starts with
 * {@code mentions.enabled=true}; the time is from its creation until every message is marked routed
 * and every record is on the topic.
 */
final class MentionPhase {
    static final int AGENTS = 50;

    private MentionPhase() {
    }

    static Results.Mentions run(Bench b, int messages) throws Exception {
        BenchDatabases.Db db = b.postgres.createDatabase("mentions");
        String topic = Bench.name("mentions") + ".recovered";
        RelayContender relay = b.relay(2, 1, Map.of(
            "mentions.enabled", "true",
            "mentions.topic", topic,
            "mentions.min.age.ms", "0"), "relay + mention recovery", "mentions");
        try {
            seed(db, messages);
            b.kafka.createTopicsIfMissing(List.of(topic));
            b.kafka.createTopicsIfMissing(relay.topics());
            relay.prepare(db);
            long t0 = System.nanoTime();
            relay.start();
            long firstRecord = 0;
            long deadline = t0 + 300_000_000_000L;
            while (true) {
                long onTopic = b.kafka.endOffsets(List.of(topic)).values().stream().mapToLong(Long::longValue).sum();
                if (firstRecord == 0 && onTopic > 0) {
                    firstRecord = System.nanoTime();
                }
                long unrouted = db.queryLong("SELECT count(*) FROM messages WHERE mentions_routed_at IS NULL");
                if (unrouted == 0 && onTopic >= messages) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("mention recovery: " + unrouted + " messages still unrouted and "
                        + onTopic + " of " + messages + " records on the topic after 300 s");
                }
                Thread.sleep(25);
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            long records = b.kafka.endOffsets(List.of(topic)).values().stream().mapToLong(Long::longValue).sum();
            long owed = db.queryLong("SELECT count(*) FROM owed_mentions");
            Results.Mentions m = new Results.Mentions(messages, Results.round2(seconds), Math.round(messages / seconds),
                records, owed, Results.round1((firstRecord - t0) / 1e6));
            b.log("  %-34s %,9d unrouted messages recovered in %6.2f s = %,7d messages/s (%,d records, %,d owed rows)",
                "mention recovery", messages, seconds, (long) m.messagesPerSec(), records, owed);
            return m;
        } finally {
            relay.close();
            b.postgres.dropDatabase(db);
        }
    }

    /** One channel, one author, {@value #AGENTS} offline agent members who are not subscribed: every mention is owed. */
    private static void seed(BenchDatabases.Db db, int messages) {
        db.execute("""
            INSERT INTO channels(id, name, mandatory_subscription) VALUES ('c-bench', 'bench', false), ('c-home', 'home', false);
            INSERT INTO topics(id, channel_id) VALUES ('t-bench', 'c-bench');
            INSERT INTO accounts(id, handle, kind) VALUES ('u-author', 'author', 'human');
            INSERT INTO accounts(id, handle, kind, home_channel_id)
              SELECT 'a-' || k, 'agent' || k, 'agent', 'c-home' FROM generate_series(0, %d) k;
            INSERT INTO channel_members(channel_id, account_id, subscribed) VALUES ('c-bench', 'u-author', true);
            INSERT INTO channel_members(channel_id, account_id, subscribed)
              SELECT 'c-bench', 'a-' || k, false FROM generate_series(0, %d) k;
            """.formatted(AGENTS - 1, AGENTS - 1));
        db.execute("""
            INSERT INTO messages(id, topic_id, author_id, blocks, at_unix_ms)
              SELECT 'm-' || g, 't-bench', 'u-author',
                     jsonb_build_array(jsonb_build_object('type', 'text', 'text',
                       'hello @agent' || (g %% %d) || ', can you take a look at ticket ' || g || '?')),
                     (extract(epoch FROM now()) * 1000)::bigint - 3600000
                FROM generate_series(1, %d) g;
            ANALYZE messages;
            """.formatted(AGENTS, messages));
    }
}
