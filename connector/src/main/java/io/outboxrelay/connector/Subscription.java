package io.outboxrelay.connector;

import java.util.List;
import java.util.regex.Pattern;

/**
 * One subscriber of the outbox: a name, the topic its records go to, the event types it wants (glob
 * list) and whether it coalesces events per subject within a claimed batch.
 */
public record Subscription(String name, String topic, List<String> eventTypeGlobs, boolean coalesce) {
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]+");
    static final Pattern GLOB = Pattern.compile("[A-Za-z0-9._:/*?-]+");

    public Subscription {
        eventTypeGlobs = List.copyOf(eventTypeGlobs);
    }

    /** Whether an event of this type goes to this subscription. */
    public boolean matches(String eventType) {
        for (String glob : eventTypeGlobs) {
            if (globMatches(glob, eventType, 0, 0)) {
                return true;
            }
        }
        return false;
    }

    /** {@code *} matches any run of characters (dots included), {@code ?} exactly one. */
    static boolean globMatches(String glob, String text, int g, int t) {
        while (g < glob.length()) {
            char c = glob.charAt(g);
            if (c == '*') {
                for (int k = t; k <= text.length(); k++) {
                    if (globMatches(glob, text, g + 1, k)) {
                        return true;
                    }
                }
                return false;
            }
            if (t >= text.length() || (c != '?' && c != text.charAt(t))) {
                return false;
            }
            g++;
            t++;
        }
        return t == text.length();
    }
}
