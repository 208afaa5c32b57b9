package io.outboxrelay.quickstart;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The chat server side of mention recovery, as a demo (tables of schemas/sql/mentions.sql). Channel
 * #ops has two people and three agents: scout (offline, not subscribed, so its mentions are OWED),
 * triage (offline, subscribed: WAKE) and pilot (a live session: STEER). Before the connector starts,
 * some messages were committed but never routed, as after a server crash; while it runs, every few
 * seconds the "server" posts a message and again dies before routing it. Messages it did route are
 * marked at insert and are left alone by the recovery task.
 */
final class DemoChat {
    static final String CHANNEL = "c-ops";
    private static final String TOPIC = "t-deploys";
    private static final List<String> LATER_MESSAGES = List.of(
        "@scout can you re-run the canary for build 1433?",
        "@agents standup in 5, post your status",
        "@triage please label the flaky test reports",
        "@pilot roll back eu-west if error rate stays above 2%");

    private final QuickstartDatabase db;
    private final AtomicInteger messageSeq = new AtomicInteger();
    private ScheduledExecutorService timer;

    DemoChat(QuickstartDatabase db) {
        this.db = db;
    }

    /** People, agents, the channel and its members, plus the messages a crash left unrouted. */
    void seed() throws SQLException {
        long now = System.currentTimeMillis();
        db.execute("""
            INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES
              ('u-ada', 'ada', 'human', NULL),
              ('u-lin', 'lin', 'human', NULL),
              ('a-scout', 'scout', 'agent', NULL),
              ('a-triage', 'triage', 'agent', NULL),
              ('a-pilot', 'pilot', 'agent', NULL);
            INSERT INTO channels (id, name, mandatory_subscription) VALUES ('c-ops', 'ops', false);
            INSERT INTO topics (id, channel_id) VALUES ('t-deploys', 'c-ops');
            INSERT INTO channel_members (channel_id, account_id, subscribed) VALUES
              ('c-ops', 'u-ada', true), ('c-ops', 'u-lin', true),
              ('c-ops', 'a-scout', false), ('c-ops', 'a-triage', true), ('c-ops', 'a-pilot', true);
            """);
        db.execute("INSERT INTO agent_sessions (id, account_id, started_at_unix_ms, last_seen_unix_ms)"
            + " VALUES ('s-pilot', 'a-pilot', " + now + ", " + now + ")");
        long fiveMinutesAgo = now - 300_000;
        post("u-ada", text("@scout can you look at the failed deploy of build 1432?"), fiveMinutesAgo, false);
        post("u-lin", text("@triage @pilot build 1432 is red on eu-west"), fiveMinutesAgo + 1_000, false);
        post("u-ada", "[{\"type\":\"code\",\"text\":\"grep @scout deploy.log\"}]", fiveMinutesAgo + 2_000, false);
        post("u-lin", text("thanks @pilot, all green now"), fiveMinutesAgo + 3_000, true);
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "quickstart-chat");
            t.setDaemon(true);
            return t;
        });
        // pilot's agent keeps its session alive from now on, so its mentions are STEERed
        timer.scheduleAtFixedRate(() -> {
            try {
                db.execute("UPDATE agent_sessions SET last_seen_unix_ms = " + System.currentTimeMillis()
                    + " WHERE id = 's-pilot'");
            } catch (SQLException e) {
                // the database is going away at shutdown; nothing to report
            }
        }, 2, 2, TimeUnit.SECONDS);
    }

    /** Every {@code periodSeconds}: one message the "server" dies before routing. Call after {@link #seed}. */
    void start(int periodSeconds) {
        AtomicInteger n = new AtomicInteger();
        timer.scheduleAtFixedRate(() -> {
            try {
                long now = System.currentTimeMillis();
                int i = n.getAndIncrement();
                post(i % 2 == 0 ? "u-ada" : "u-lin", text(LATER_MESSAGES.get(i % LATER_MESSAGES.size())), now, false);
            } catch (SQLException e) {
                // the database is going away at shutdown; nothing to report
            }
        }, periodSeconds, periodSeconds, TimeUnit.SECONDS);
    }

    private void post(String author, String blocksJson, long atUnixMs, boolean routedByServer) throws SQLException {
        try (Connection c = db.connect();
             PreparedStatement ps = c.prepareStatement("INSERT INTO messages (id, topic_id, author_id, blocks,"
                 + " at_unix_ms, mentions_routed_at) VALUES (?, ?, ?, ?::jsonb, ?, ?)")) {
            ps.setString(1, String.format("m-%04d", messageSeq.incrementAndGet()));
            ps.setString(2, TOPIC);
            ps.setString(3, author);
            ps.setString(4, blocksJson);
            ps.setLong(5, atUnixMs);
            if (routedByServer) {
                ps.setLong(6, atUnixMs);
            } else {
                ps.setNull(6, java.sql.Types.BIGINT);
            }
            ps.executeUpdate();
        }
    }

    private static String text(String text) {
        return "[{\"type\":\"text\",\"text\":\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}]";
    }

    void stop() throws InterruptedException {
        if (timer != null) {
            timer.shutdownNow();
            timer.awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
