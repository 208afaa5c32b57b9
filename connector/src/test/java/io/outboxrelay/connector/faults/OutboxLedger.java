package io.outboxrelay.connector.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outboxrelay.testsupport.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The database side of {@link DeliveryChecker} for the outbox: which events each subscription's topic
 * must hold (every committed row whose type matches the subscription) and which rows are stamped as
 * delivered there, with the partition and offset their {@code fanout} names.
 */
final class OutboxLedger {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A subscription as the test configured it: name, topic, event type globs ({@code *} for all). */
    record Subscription(String name, String topic, String eventTypes) {
        static Subscription all(String name, String topic) {
            return new Subscription(name, topic, "*");
        }

        boolean matches(String type) {
            for (String glob : eventTypes.split(",")) {
                String regex = java.util.Arrays.stream(glob.trim().split("\\*", -1)).map(Pattern::quote)
                    .collect(Collectors.joining(".*"));
                if (type.matches(regex)) {
                    return true;
                }
            }
            return false;
        }

        /** The connector config keys for this subscription. */
        Map<String, String> config() {
            return Map.of("subscription." + name + ".topic", topic, "subscription." + name + ".event.types", eventTypes);
        }
    }

    private OutboxLedger() {
    }

    /** Reads the outbox and every subscription's topic and compares them. */
    static DeliveryChecker.Reports check(TestDatabase db, String bootstrapServers, List<Subscription> subscriptions) {
        return check(db, bootstrapServers, subscriptions, TopicContents.Isolation.READ_UNCOMMITTED);
    }

    /** The same, the topics read as a consumer of that isolation level reads them. */
    static DeliveryChecker.Reports check(TestDatabase db, String bootstrapServers, List<Subscription> subscriptions,
                                         TopicContents.Isolation isolation) {
        List<List<Object>> rows = db.query("SELECT id::text, type, fanned_out_at IS NOT NULL, fanout::text, "
            + "poisoned_at IS NOT NULL, attempts, lease_owner, lease_until > now(), last_error FROM events");
        List<DeliveryChecker.Report> reports = new ArrayList<>();
        for (Subscription s : subscriptions) {
            List<String> committed = new ArrayList<>();
            List<DeliveryChecker.Stamp> stamped = new ArrayList<>();
            Map<String, String> notes = new HashMap<>();
            for (List<Object> row : rows) {
                String id = (String) row.get(0);
                if (!s.matches((String) row.get(1))) {
                    continue;
                }
                committed.add(id);
                if (Boolean.TRUE.equals(row.get(2))) {
                    DeliveryChecker.Stamp stamp = stamp(id, (String) row.get(3), s.name());
                    if (stamp != null) {
                        stamped.add(stamp);
                    }
                } else {
                    notes.put(id, (Boolean.TRUE.equals(row.get(4)) ? "POISONED" : "not stamped") + ", attempts "
                        + row.get(5) + ", lease " + row.get(6) + (Boolean.TRUE.equals(row.get(7)) ? " (live)" : "")
                        + (row.get(8) == null ? "" : ", last error: " + row.get(8)));
                }
            }
            reports.add(DeliveryChecker.check(s.topic(), committed, stamped,
                TopicContents.read(bootstrapServers, s.topic(), TopicContents::outboxRecord, isolation), notes));
        }
        return new DeliveryChecker.Reports(reports);
    }

    /** The stamp of one row for one subscription; null when the fanout says it was filtered or coalesced. */
    private static DeliveryChecker.Stamp stamp(String id, String fanoutJson, String subscription) {
        if (fanoutJson == null) {
            return DeliveryChecker.Stamp.of(id);
        }
        try {
            JsonNode entry = JSON.readTree(fanoutJson).get(subscription);
            if (entry == null || entry.isNull()) {
                return DeliveryChecker.Stamp.of(id); // stamped without naming a record: must still be there
            }
            if (entry.has("filtered") || entry.has("coalesced_into")) {
                return null;
            }
            return new DeliveryChecker.Stamp(id, entry.path("partition").asInt(-1), entry.path("offset").asLong(-1));
        } catch (IOException e) {
            throw new UncheckedIOException(fanoutJson, e);
        }
    }

    /** Rows a task stamped from a committed source offset, without producing them again (docs/exactly-once.md, 3.5). */
    static long recovered(TestDatabase db) {
        return db.queryLong("SELECT count(*) FROM events WHERE fanout::text LIKE '%\"recovered\"%'");
    }

    /** Rows not yet stamped and not poisoned. */
    static long backlog(TestDatabase db) {
        return db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL");
    }

    static long stamped(TestDatabase db) {
        return db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL");
    }

    static long poisoned(TestDatabase db) {
        return db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL");
    }

    /** A one-line picture of the outbox for failure messages and logs. */
    static String state(TestDatabase db) {
        return db.query("SELECT fanned_out_at IS NOT NULL AS stamped, poisoned_at IS NOT NULL AS poisoned, "
            + "lease_owner, attempts, count(*) FROM events GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4").toString();
    }
}
