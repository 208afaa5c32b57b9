package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class SubscriptionTest {
    private static Subscription sub(String... globs) {
        return new Subscription("s", "s", List.of(globs), false);
    }

    @Test
    void aStarMatchesAnyRunOfCharactersIncludingDots() {
        assertThat(sub("*").matches("anything.at.all")).isTrue();
        assertThat(sub("supplier.*").matches("supplier.connected")).isTrue();
        assertThat(sub("supplier.*").matches("supplier.")).isTrue();
        assertThat(sub("supplier.*").matches("supplierx.connected")).isFalse();
        assertThat(sub("*.created").matches("note.created")).isTrue();
        assertThat(sub("note.?").matches("note.a")).isTrue();
        assertThat(sub("note.?").matches("note.ab")).isFalse();
    }

    @Test
    void starsBacktrackToTheLastStarOnly() {
        assertThat(sub("*a*b").matches("xaybzb")).isTrue();
        assertThat(sub("*a*b").matches("xaybzbc")).isFalse();
        assertThat(sub("a*b*c").matches("abc")).isTrue();
        assertThat(sub("a*b*c").matches("acb")).isFalse();
        assertThat(sub("**").matches("")).isTrue();
        assertThat(sub("*?").matches("")).isFalse();
        assertThat(sub("?*?").matches("ab")).isTrue();
        assertThat(sub("*.created").matches("a.created.created")).isTrue();
        assertThat(sub("*.*.*.created").matches("a.b.c.created")).isTrue();
        assertThat(sub("*.*.*.created").matches("a.b.created")).isFalse();
        assertThat(sub("").matches("")).isTrue();
        assertThat(sub("").matches("a")).isFalse();
    }

    /**
     * A failing match used to try every split position for each star: O(n^k) on the task thread for an
     * event type of n characters and a glob of k stars, so one row of dots held poll() for hours. Matching
     * now costs at most the type's length times the glob's; this only asserts that it finishes.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aHugeTypeOfDotsAgainstAGlobOfSeveralStarsIsDecidedAtOnce() {
        String dots = ".".repeat(300_000);
        assertThat(sub("*.*.*.created").matches(dots)).isFalse();
        assertThat(sub("*.*.*.*.*.*.x").matches(dots)).isFalse();
        assertThat(sub("*.*.*.created").matches(dots + "created")).isTrue();
        assertThat(sub("*?*?*?*?*?z").matches("y".repeat(300_000))).isFalse();
    }

    @Test
    void aListMatchesWhenAnyGlobMatchesAndNothingElse() {
        Subscription s = sub("supplier.*", "note.created");
        assertThat(s.matches("note.created")).isTrue();
        assertThat(s.matches("note.deleted")).isFalse();
        assertThat(s.matches("Supplier.connected")).as("case-sensitive").isFalse();
    }

    @Test
    void theConfigBuildsSubscriptionsWithDefaultsAndRejectsBadNamesTopicsAndGlobs() {
        Map<String, String> props = new HashMap<>();
        props.put("connection.url", "jdbc:postgresql://localhost/app");
        props.put("subscriptions", "corpus.index,webhooks");
        props.put("subscription.webhooks.topic", "hooks");
        props.put("subscription.webhooks.event.types", "supplier.*,note.created");
        props.put("subscription.corpus.index.coalesce", "true");
        OutboxSourceConnectorConfig config = new OutboxSourceConnectorConfig(props);
        assertThat(config.subscriptions()).containsExactly(
            new Subscription("corpus.index", "corpus.index", List.of("*"), true),
            new Subscription("webhooks", "hooks", List.of("supplier.*", "note.created"), false));

        Map<String, String> badName = new HashMap<>(props);
        badName.put("subscriptions", "ok,not ok");
        assertThatThrownBy(() -> new OutboxSourceConnectorConfig(badName))
            .isInstanceOf(ConfigException.class).hasMessageContaining("not ok");
        Map<String, String> badTopic = new HashMap<>(props);
        badTopic.put("subscription.webhooks.topic", "no/slashes");
        assertThatThrownBy(() -> new OutboxSourceConnectorConfig(badTopic))
            .isInstanceOf(ConfigException.class).hasMessageContaining("subscription.webhooks.topic");
        Map<String, String> badGlob = new HashMap<>(props);
        badGlob.put("subscription.webhooks.event.types", "supplier.*,bad glob");
        assertThatThrownBy(() -> new OutboxSourceConnectorConfig(badGlob))
            .isInstanceOf(ConfigException.class).hasMessageContaining("bad glob");
    }
}
