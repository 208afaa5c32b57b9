package io.outboxrelay.connector;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Keys in the connector's own namespaces that it does not define: a typo, which Connect would pass over in silence
 * while the key meant keeps its default ({@code subscription.webhooks.evnt.types}: the subscriber gets every event
 * type; {@code mentions.enable}: no mention recovery), or the key of a subscription that {@code subscriptions} does
 * not list. Each is an error on the key, with the key meant when one is close. Connect's keys ({@code tasks.max},
 * {@code transforms.*}, {@code errors.*}, {@code producer.override.*}, the converters) are not the connector's to judge.
 */
final class UnknownKeys {
    /**
     * The prefixes of every key the connector defines, and of no key of Connect's, with their likely slips
     * ({@code subscriptions.webhooks.topic}, {@code mention.enabled}); matched in any case ({@code OUTBOX.TABLE}).
     */
    static final List<String> NAMESPACES = List.of("outbox.", "mentions.", "mention.", "subscription.",
        "subscriptions.", "connection.", "cloudevents.");

    private UnknownKeys() {
    }

    static void check(ConfigDef def, Map<String, String> props, Config result) {
        Set<String> defined = def.configKeys().keySet();
        List<String> listed = OutboxConfigDef.subscriptionNames(props);
        for (String key : new TreeSet<>(props.keySet())) {
            String lower = key.toLowerCase(Locale.ROOT);
            boolean ours = NAMESPACES.stream().anyMatch(lower::startsWith);
            // without subscriptions ConfigDef reports that key; every subscription.<name>.* key is not to blame too
            boolean unjudged = listed.isEmpty() && lower.startsWith(OutboxSourceConnectorConfig.SUBSCRIPTION_PREFIX);
            if (ours && !unjudged && !defined.contains(key)) {
                OutboxLiveValidator.error(result, key, message(key, defined, listed));
            }
        }
    }

    private static String message(String key, Set<String> defined, List<String> listed) {
        String prefix = OutboxSourceConnectorConfig.SUBSCRIPTION_PREFIX;
        if (listed.stream().anyMatch(name -> key.equals(prefix + name))) {
            return key + " names a subscription, and is no key: its keys are " + key + ".topic, " + key
                + ".event.types and " + key + ".coalesce";
        }
        // names may hold dots (corpus.index): a key is a listed subscription's when it starts with one
        if (key.startsWith(prefix) && listed.stream().noneMatch(name -> key.startsWith(prefix + name + "."))) {
            return key + " is the key of no subscription that " + OutboxSourceConnectorConfig.SUBSCRIPTIONS
                + " lists (" + String.join(", ", listed) + "): add the subscription there, or correct or remove the"
                + " key" + closest(key, defined);
        }
        return key + " is no key of this connector, and would be ignored while the key meant keeps its default:"
            + " correct or remove it" + closest(key, defined) + " (docs/configuration.md lists every key)";
    }

    /** ", did you mean X?" for the defined key nearest to {@code key}, when it is near; else nothing. */
    static String closest(String key, Set<String> defined) {
        String lower = key.toLowerCase(Locale.ROOT);
        return defined.stream()
            .min(Comparator.comparingInt((String k) -> distance(lower, k)).thenComparing(k -> k))
            .filter(k -> distance(lower, k) <= Math.max(2, key.length() / 6))
            .map(k -> "; did you mean " + k + "?")
            .orElse("");
    }

    /** Levenshtein distance: insertions, deletions and substitutions. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
