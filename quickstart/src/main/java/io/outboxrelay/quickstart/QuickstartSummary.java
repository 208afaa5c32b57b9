package io.outboxrelay.quickstart;

import java.io.PrintStream;
import java.util.Map;

/**
 * What a quickstart run did, read after the connector stopped: the outbox's own account (from the
 * database) next to what arrived in Kafka.
 *
 * @param seconds         how long the demo writer ran
 * @param written         events the demo writer committed
 * @param fannedOut       rows with {@code fanned_out_at} set
 * @param pending         rows neither fanned out nor poisoned (in flight when the connector stopped)
 * @param poisoned        rows set aside after {@code outbox.max.attempts}
 * @param latencyP50Ms    {@code fanned_out_at - occurred_at}, median over every fanned-out row
 * @param latencyP99Ms    the same, 99th percentile
 * @param subscriptions   per subscription name: its topic and counts
 * @param mentionsTopic   the recovered-mentions topic, null when mention recovery is off
 * @param mentionRecords  records on that topic
 * @param mentionActions  those records by {@code action} (STEER, OWED, WAKE)
 * @param owedRows        rows in {@code owed_mentions}
 * @param unroutedLeft    messages still {@code mentions_routed_at IS NULL}
 * @param failure         the connector's or a task's failure, null when it ran throughout
 */
public record QuickstartSummary(
    long seconds,
    long written,
    long fannedOut,
    long pending,
    long poisoned,
    long latencyP50Ms,
    long latencyP99Ms,
    Map<String, SubscriptionCounts> subscriptions,
    String mentionsTopic,
    long mentionRecords,
    Map<String, Long> mentionActions,
    long owedRows,
    long unroutedLeft,
    String failure) {

    /**
     * @param topic     the subscription's topic
     * @param records   records on the topic, from Kafka's end offsets
     * @param delivered rows whose {@code fanout} names an offset on it for this subscription, or says a restarted task
     *                  found the row's records in Kafka ({@code recovered})
     * @param coalesced rows whose {@code fanout} says they were coalesced into a later event of their subject
     * @param matching  fanned-out rows whose type the subscription wants
     */
    public record SubscriptionCounts(String topic, long records, long delivered, long coalesced, long matching) {
        /** Every matching event delivered or coalesced, and every delivered one in Kafka. */
        boolean accountedFor() {
            return delivered + coalesced == matching && records >= delivered;
        }
    }

    public boolean ok() {
        return failure == null;
    }

    /** Whether every subscription's matching events are accounted for: delivered or coalesced, and in Kafka. */
    public boolean everyEventAccountedFor() {
        return subscriptions.values().stream().allMatch(SubscriptionCounts::accountedFor);
    }

    void print(PrintStream out) {
        out.println();
        out.printf("Summary after %d s%n", seconds);
        out.printf("  events written    %,d, each in the transaction of its demo_orders change%n", written);
        out.printf("  fanned out        %,d (%,d still pending at stop, %,d poisoned)%n", fannedOut, pending, poisoned);
        out.printf("  fan-out latency   p50 %,d ms, p99 %,d ms  (occurred_at -> fanned_out_at, i.e. until every"
            + " subscriber's record was acknowledged)%n", latencyP50Ms, latencyP99Ms);
        out.printf("  %-16s  %-24s %16s %17s %10s%n", "subscription", "topic", "matching events", "records in Kafka",
            "coalesced");
        subscriptions.forEach((name, c) -> out.printf("  %-16s  %-24s %,16d %,17d %10s%n", name, c.topic(),
            c.matching(), c.records(), c.coalesced() == 0 ? "-" : String.format("%,d", c.coalesced())));
        long duplicates = subscriptions.values().stream().mapToLong(c -> Math.max(0, c.records() - c.delivered())).sum();
        subscriptions.forEach((name, c) -> {
            if (!c.accountedFor()) {
                out.printf("  CHECK %s: %,d matching events, but %,d delivered and %,d coalesced by their fanout, and"
                    + " %,d records in Kafka%n", name, c.matching(), c.delivered(), c.coalesced(), c.records());
            }
        });
        out.println(!everyEventAccountedFor()
            ? "  CHECK: some matching events are not accounted for (above); quickstart.log has the relay's log"
            : duplicates == 0
                ? "  every matching event reached its subscriber once, or was coalesced into a later event of its subject"
                : String.format("  every matching event reached its subscriber or was coalesced; %,d records are"
                    + " duplicates from records sent again after a restart (consumers dedupe on event.id)", duplicates));
        if (mentionsTopic != null) {
            out.printf("  mention recovery  %,d records on %s %s; %,d owed_mentions rows%s%n", mentionRecords,
                mentionsTopic, mentionActions, owedRows, unroutedLeft == 0 ? "" : String.format(
                    "; %,d message%s posted too recently for the periodic scan (mentions.min.age.ms) still unrouted",
                    unroutedLeft, unroutedLeft == 1 ? "" : "s"));
        }
        if (failure != null) {
            out.println("  FAILED            " + failure);
        }
    }
}
