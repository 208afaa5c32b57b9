package io.outboxrelay.mentions;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The faulty messages the task has reported at ERROR already: a message left unrouted for a fault is read again every
 * pass until someone fixes its row, and one ERROR a message a minute would bury everything else in the log. The
 * first report is an ERROR, the repeats DEBUG; each pass's summary still counts them. Remembers the last
 * {@code capacity} messages, so a row still faulty after many others comes back at ERROR. Task thread only.
 */
final class ReportedFaults {
    private final int capacity;
    private final Set<MentionOffsets.Named> reported = new LinkedHashSet<>();

    ReportedFaults(int capacity) {
        this.capacity = capacity;
    }

    /** Whether this is the message's first report (then remembered), the oldest one forgotten when full. */
    boolean first(MentionOffsets.Named message) {
        if (!reported.add(message)) {
            return false;
        }
        if (reported.size() > capacity) {
            Iterator<MentionOffsets.Named> oldest = reported.iterator();
            oldest.next();
            oldest.remove();
        }
        return true;
    }
}
