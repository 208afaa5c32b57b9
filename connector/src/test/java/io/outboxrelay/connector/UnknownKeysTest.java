package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.Test;

/**
 * Found by a user trial: a mistyped key of the connector's passed validation in silence, and the key meant kept its
 * default; subscription.webhooks.evnt.types sent that subscriber every event type.
 */
class UnknownKeysTest {

    private static Map<String, List<String>> errors(String... keysAndValues) {
        Map<String, String> props = new HashMap<>(Map.of("connection.url", "jdbc:postgresql://localhost/app",
            "subscriptions", "webhooks,email", "subscription.webhooks.topic", "hooks"));
        for (int i = 0; i < keysAndValues.length; i += 2) {
            props.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return errorsOf(props);
    }

    /** Every key with errors, after ConfigDef's validation and the unknown keys' check. */
    private static Map<String, List<String>> errorsOf(Map<String, String> props) {
        ConfigDef def = OutboxConfigDef.forProps(props);
        Config result = new Config(new ArrayList<>(def.validate(props)));
        UnknownKeys.check(def, props, result);
        Map<String, List<String>> out = new HashMap<>();
        for (ConfigValue v : result.configValues()) {
            if (!v.errorMessages().isEmpty()) {
                out.put(v.name(), v.errorMessages());
            }
        }
        return out;
    }

    /** One error on {@code key}, naming {@code meant}. */
    private static void assertSuggests(Map<String, List<String>> errors, String key, String meant) {
        assertThat(errors.get(key)).as(key).singleElement().asString().contains("did you mean " + meant + "?");
    }

    /** Slips of prefix ({@code subscriptions.}, {@code mention.}) and of case (found by review) too. */
    @Test
    void aMistypedKeyOfTheConnectorIsAnErrorNamingTheKeyMeant() {
        Map<String, String> meant = Map.of("subscription.webhooks.evnt.types", "subscription.webhooks.event.types",
            "outbox.tabel", "outbox.table", "mentions.enable", "mentions.enabled", "connection.usr", "connection.user",
            "subscriptions.webhooks.event.types", "subscription.webhooks.event.types", "OUTBOX.TABLE", "outbox.table",
            "mention.enabled", "mentions.enabled");
        List<String> keysAndValues = new ArrayList<>();
        meant.keySet().forEach(k -> keysAndValues.addAll(List.of(k, "x")));

        Map<String, List<String>> errors = errors(keysAndValues.toArray(new String[0]));

        assertThat(errors).containsOnlyKeys(meant.keySet());
        meant.forEach((typo, key) -> assertThat(errors.get(typo)).as(typo).singleElement().asString()
            .contains("no key of this connector").contains("did you mean " + key + "?"));
    }

    @Test
    void theKeyOfASubscriptionNotListedIsAnErrorNamingTheList() {
        Map<String, List<String>> errors = errors("subscription.emial.topic", "mail");

        assertThat(errors).containsOnlyKeys("subscription.emial.topic");
        assertThat(errors.get("subscription.emial.topic")).singleElement().asString()
            .contains("the key of no subscription that subscriptions lists (webhooks, email)")
            .contains("did you mean subscription.email.topic?");
    }

    /** Found by the same trial: a missing subscriptions key was reported twice, in two wordings. */
    @Test
    void aMissingSubscriptionsKeyIsReportedOnceAndAnEmptyOneSaysWhatToName() {
        Map<String, String> props = new HashMap<>(Map.of("connection.url", "jdbc:postgresql://localhost/app"));
        List<String> missing = OutboxConfigDef.forProps(props).validate(props).stream()
            .filter(v -> v.name().equals("subscriptions")).findFirst().orElseThrow().errorMessages();
        props.put("subscriptions", "");
        List<String> empty = OutboxConfigDef.forProps(props).validate(props).stream()
            .filter(v -> v.name().equals("subscriptions")).findFirst().orElseThrow().errorMessages();

        assertThat(missing).singleElement().asString().contains("Missing required configuration");
        props.remove("subscriptions");
        props.put("subscription.webhooks.topic", "hooks");
        assertThat(errorsOf(props)).as("no error but the missing key's").containsOnlyKeys("subscriptions");
        assertThat(empty).singleElement().asString().contains("name at least one subscription");
    }

    /** Found by review: a subscription's name given as a key. */
    @Test
    void aSubscriptionsNameIsNoKey() {
        assertThat(errors("subscription.email", "order.*").get("subscription.email")).singleElement().asString()
            .contains("names a subscription")
            .contains("subscription.email.topic, subscription.email.event.types and subscription.email.coalesce");
    }

    /** A subscription's name may hold dots: a typo in its key's field is a typo, not an unlisted subscription. */
    @Test
    void aTypoInTheKeyOfASubscriptionWhoseNameHoldsDotsNamesTheKeyMeant() {
        Map<String, List<String>> errors = errors("subscriptions", "webhooks,corpus.index", "subscription.corpus.index.topik",
            "c");

        assertThat(errors).containsOnlyKeys("subscription.corpus.index.topik");
        assertSuggests(errors, "subscription.corpus.index.topik", "subscription.corpus.index.topic");
    }

    @Test
    void connectsOwnKeysAndEveryKeyOfTheConnectorPass() {
        assertThat(errors("tasks.max", "2", "transforms", "route", "transforms.route.type", "x",
            "errors.tolerance", "none", "producer.override.linger.ms", "0", "value.converter", "y",
            "header.converter", "z", "subscription.email.event.types", "order.paid", "subscription.email.coalesce",
            "false", "outbox.table", "app.events", "mentions.enabled", "true", "connection.user", "relay",
            "cloudevents.source", "/shop", "headers.format", "plain", "value.format", "envelope")).isEmpty();
    }

    @Test
    void aKeyFarFromEveryKeyIsRefusedWithoutAGuess() {
        assertThat(errors("outbox.something.else.entirely", "1").get("outbox.something.else.entirely"))
            .singleElement().asString().contains("no key of this connector").doesNotContain("did you mean");
    }
}
