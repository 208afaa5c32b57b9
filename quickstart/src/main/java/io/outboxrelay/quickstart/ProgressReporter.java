package io.outboxrelay.quickstart;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.connector.Subscription;
import java.io.IOException;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live progress line and the final numbers. Per second: events the writer committed, rows fanned
 * out (from the outbox table: all rows minus pending minus poisoned), fan-out latency of
 * the events written a second earlier, records per subscriber topic and recovered mentions (from
 * Kafka's end offsets).
 */
final class ProgressReporter {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final QuickstartDatabase db;
    private final QuickstartKafka kafka;
    private final DemoEventWriter writer;
    private final List<Subscription> subscriptions;
    private final String mentionsTopic;
    private final PrintStream out;
    private long lastNanos;
    private long lastWritten;
    private long lastFanned;
    private long windowFrom;
    private long windowTo;

    ProgressReporter(QuickstartDatabase db, QuickstartKafka kafka, DemoEventWriter writer,
                     List<Subscription> subscriptions, String mentionsTopic, PrintStream out) {
        this.db = db;
        this.kafka = kafka;
        this.writer = writer;
        this.subscriptions = subscriptions;
        this.mentionsTopic = mentionsTopic;
        this.out = out;
        this.lastNanos = System.nanoTime();
    }

    /** Records on each subscriber topic and on the mentions topic, by topic. */
    Map<String, Long> topicCounts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (Subscription s : subscriptions) {
            counts.put(s.topic(), kafka.records(s.topic()));
        }
        if (mentionsTopic != null) {
            counts.put(mentionsTopic, kafka.records(mentionsTopic));
        }
        return counts;
    }

    /** Samples everything once and prints one line. */
    Map<String, Long> printLine(long elapsedSeconds) throws SQLException {
        long now = System.nanoTime();
        long[] db1 = db.queryLongs("SELECT (SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL),"
            + " (SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL), (SELECT COALESCE(max(seq), 0) FROM events),"
            + " (SELECT count(*) FROM events)");
        long fanned = db1[3] - db1[0] - db1[1];
        long written = writer.written(); // read after the database, so it is never behind what the query saw
        // latency of the events written between the previous two samples: most are settled by now, and
        // the ones that are not count with their age so far, so the figure never flatters
        long[] latency = db.queryLongs("SELECT (percentile_disc(0.5) WITHIN GROUP (ORDER BY ms))::bigint,"
            + " (percentile_disc(0.99) WITHIN GROUP (ORDER BY ms))::bigint FROM (SELECT extract(epoch FROM"
            + " COALESCE(fanned_out_at, clock_timestamp()) - occurred_at) * 1000 AS ms FROM events"
            + " WHERE seq > ? AND seq <= ?) x", windowFrom, windowTo);
        windowFrom = windowTo;
        windowTo = db1[2];
        double seconds = Math.max(0.001, (now - lastNanos) / 1e9);
        long writeRate = Math.round((written - lastWritten) / seconds);
        long fanRate = Math.round((fanned - lastFanned) / seconds);
        lastNanos = now;
        lastWritten = written;
        lastFanned = fanned;

        Map<String, Long> counts = topicCounts();
        StringBuilder line = new StringBuilder();
        line.append(String.format("%4ds | written %,7d (%,d/s) | fanned out %,7d (%,d/s)", elapsedSeconds, written,
            writeRate, fanned, fanRate));
        if (latency[1] > 0) {
            line.append(String.format(" p50 %d ms p99 %d ms", latency[0], latency[1]));
        }
        line.append(" |");
        for (Subscription s : subscriptions) {
            line.append(String.format(" %s %,d", s.name(), counts.get(s.topic())));
        }
        if (mentionsTopic != null) {
            line.append(String.format(" | mentions recovered %,d", counts.get(mentionsTopic)));
        }
        if (db1[1] > 0) {
            line.append(String.format(" | POISONED %,d", db1[1]));
        }
        out.println(line);
        return counts;
    }

    /** One line explaining the columns of the progress line. */
    void printLegend() {
        out.println("Every second: written = events the shop committed | fanned out = rows stamped after every"
            + " subscriber's record was acknowledged,");
        out.println("with p50/p99 of occurred_at -> stamp for the previous second's events | records per subscription"
            + " topic" + (mentionsTopic == null ? "" : " | records of recovered @mentions"));
    }

    /**
     * Prints a record of each subscription topic and of the mentions topic, as a consumer receives it;
     * for a coalescing subscription, one that stands for several events of its subject when there is one.
     */
    void printSamples() {
        out.println();
        out.println("What consumers receive (JSON converter, schemas off):");
        Subscription plain = subscriptions.stream().filter(s -> !s.coalesce()).findFirst().orElse(null);
        Subscription coalescing = subscriptions.stream().filter(Subscription::coalesce).findFirst().orElse(null);
        if (plain != null) {
            printSample(plain.topic(), r -> true, "every matching event, one record each");
        }
        if (coalescing != null) {
            printSample(coalescing.topic(), r -> coalescedSeqs(r.value()) > 1,
                "coalesced: one record for the latest event of a subject in a claimed batch; coalesced_seqs lists"
                    + " the events it stands for");
        }
        if (mentionsTopic != null) {
            printSample(mentionsTopic, r -> true, "a routing decision for a mention the chat server never routed");
        }
        out.println();
    }

    private void printSample(String topic, java.util.function.Predicate<QuickstartKafka.Received> wanted, String what) {
        List<QuickstartKafka.Received> records = kafka.readFromStart(topic, 500, Duration.ofSeconds(5));
        QuickstartKafka.Received r = records.stream().filter(wanted).findFirst()
            .orElse(records.isEmpty() ? null : records.get(0));
        if (r == null) {
            return;
        }
        out.printf("  %s, partition %d, offset %d: %s%n", r.topic(), r.partition(), r.offset(), what);
        out.printf("    key     %s%n", r.key());
        out.printf("    headers %s%n", r.headers());
        out.printf("    value   %s%n", r.value());
    }

    private static int coalescedSeqs(String json) {
        try {
            return JSON.readTree(json).path("coalesced_seqs").size();
        } catch (IOException e) {
            return 0;
        }
    }

    /** The final numbers; call once the connector has stopped. */
    QuickstartSummary summary(long seconds, String failure) throws SQLException {
        long[] rows = db.queryLongs("SELECT count(*) FILTER (WHERE fanned_out_at IS NOT NULL),"
            + " count(*) FILTER (WHERE fanned_out_at IS NULL AND poisoned_at IS NULL),"
            + " count(*) FILTER (WHERE poisoned_at IS NOT NULL),"
            + " (percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM fanned_out_at - occurred_at) * 1000))::bigint,"
            + " (percentile_disc(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM fanned_out_at - occurred_at) * 1000))::bigint"
            + " FROM events");
        Map<String, QuickstartSummary.SubscriptionCounts> subs = new LinkedHashMap<>();
        for (Subscription s : subscriptions) {
            // delivered: an offset from the producer's acknowledgement, or "recovered" (a restarted task stamped a row
            // its committed source offset named, without producing it again: docs/guarantees.md)
            long[] c = db.queryLongs("SELECT count(*) FILTER (WHERE fanout -> ? -> 'offset' IS NOT NULL"
                + " OR fanout -> ? -> 'recovered' IS NOT NULL),"
                + " count(*) FILTER (WHERE fanout -> ? -> 'coalesced_into' IS NOT NULL) FROM events", s.name(), s.name(),
                s.name());
            long matching = 0;
            for (List<String> typeCount : db.queryStrings(
                "SELECT type, count(*) FROM events WHERE fanned_out_at IS NOT NULL GROUP BY type")) {
                if (s.matches(typeCount.get(0))) {
                    matching += Long.parseLong(typeCount.get(1));
                }
            }
            subs.put(s.name(), new QuickstartSummary.SubscriptionCounts(s.topic(), kafka.records(s.topic()), c[0], c[1],
                matching));
        }
        long mentionRecords = 0;
        Map<String, Long> actions = new TreeMap<>();
        long owed = 0;
        long unrouted = 0;
        if (mentionsTopic != null) {
            List<QuickstartKafka.Received> mentions = kafka.readFromStart(mentionsTopic, 100_000, Duration.ofSeconds(10));
            mentionRecords = mentions.size();
            for (QuickstartKafka.Received r : mentions) {
                actions.merge(action(r.value()), 1L, Long::sum);
            }
            long[] m = db.queryLongs("SELECT (SELECT count(*) FROM owed_mentions),"
                + " (SELECT count(*) FROM messages WHERE mentions_routed_at IS NULL)");
            owed = m[0];
            unrouted = m[1];
        }
        return new QuickstartSummary(seconds, writer.written(), rows[0], rows[1], rows[2], rows[3], rows[4], subs,
            mentionsTopic, mentionRecords, actions, owed, unrouted, failure);
    }

    private static String action(String json) {
        try {
            JsonNode n = JSON.readTree(json);
            JsonNode action = n.has("payload") ? n.get("payload").get("action") : n.get("action");
            return action == null ? "?" : action.asText();
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }
}
