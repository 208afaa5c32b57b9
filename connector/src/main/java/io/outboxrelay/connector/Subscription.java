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
            if (globMatches(glob, eventType)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code *} matches any run of characters (dots included), {@code ?} exactly one. Greedy, and on a
     * mismatch only the last star takes one more character: an earlier star can never do better, since the
     * last one absorbs anything. So a match costs at most the text's length times the glob's, whatever the
     * type holds (a type is the writer's input, up to the size of a record).
     */
    static boolean globMatches(String glob, String text) {
        int g = 0;
        int t = 0;
        int star = -1;
        int starText = 0;
        while (t < text.length()) {
            boolean more = g < glob.length();
            if (more && glob.charAt(g) == '*') {
                star = g++;
                starText = t;
            } else if (more && (glob.charAt(g) == '?' || glob.charAt(g) == text.charAt(t))) {
                g++;
                t++;
            } else if (star >= 0) {
                g = star + 1;
                t = ++starText;
            } else {
                return false;
            }
        }
        while (g < glob.length() && glob.charAt(g) == '*') {
            g++;
        }
        return g == glob.length();
    }
}
