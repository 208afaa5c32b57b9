package io.outboxrelay.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The summary's verdict, from counts: it names the subscription that does not add up. */
class QuickstartSummaryTest {
    private static String printed(Map<String, QuickstartSummary.SubscriptionCounts> subs) {
        QuickstartSummary summary = new QuickstartSummary(20, 100, 100, 0, 0, 10, 20, subs, null, 0, Map.of(), 0, 0,
            null);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        summary.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void recordsThatAddUpAreReportedAsReachingTheirSubscriberOnce() {
        Map<String, QuickstartSummary.SubscriptionCounts> subs = new LinkedHashMap<>();
        subs.put("search", new QuickstartSummary.SubscriptionCounts("t.search", 80, 80, 20, 100));
        subs.put("hooks", new QuickstartSummary.SubscriptionCounts("t.hooks", 60, 60, 0, 60));
        String out = printed(subs);
        assertThat(out).contains("every matching event reached its subscriber once").doesNotContain("CHECK");
    }

    @Test
    void aSubscriptionWithAnEventUnaccountedForIsNamedWithItsCounts() {
        Map<String, QuickstartSummary.SubscriptionCounts> subs = new LinkedHashMap<>();
        subs.put("search", new QuickstartSummary.SubscriptionCounts("t.search", 80, 80, 20, 100));
        subs.put("hooks", new QuickstartSummary.SubscriptionCounts("t.hooks", 59, 59, 0, 60));
        String out = printed(subs);
        assertThat(out).contains("CHECK hooks: 60 matching events, but 59 delivered and 0 coalesced by their fanout,"
            + " and 59 records in Kafka").doesNotContain("CHECK search").contains("not accounted for");
    }

    @Test
    void duplicatesAfterARestartAreCountedNotFlaggedAsLoss() {
        Map<String, QuickstartSummary.SubscriptionCounts> subs = new LinkedHashMap<>();
        subs.put("hooks", new QuickstartSummary.SubscriptionCounts("t.hooks", 63, 60, 0, 60));
        assertThat(printed(subs)).contains("3 records are duplicates").doesNotContain("CHECK");
    }
}
