package io.outboxrelay.mentions;

import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The faulty messages the task has reported at ERROR already: a message left unrouted for a fault is read again every
 * pass until someone fixes its row, and one ERROR a message a minute would bury everything else in the log. The
 * first report is an ERROR, the repeats DEBUG; each pass's summary still counts them. Past {@code capacity} messages
 * it remembers no more, and says so once: the messages after those are reported at DEBUG only (forgetting the oldest
 * instead would report every message at ERROR every pass once more are faulty than it remembers, as a pass visits
 * them in the same order). Task thread only.
 */
final class ReportedFaults {
    private static final Logger log = LoggerFactory.getLogger(ReportedFaults.class);

    private final int capacity;
    private final Set<MentionOffsets.Named> reported = new HashSet<>();
    private boolean full;

    ReportedFaults(int capacity) {
        this.capacity = capacity;
    }

    /** Whether this is the message's first report at ERROR (then remembered); false for a repeat, or when full. */
    boolean first(MentionOffsets.Named message) {
        if (reported.contains(message)) {
            return false;
        }
        if (reported.size() >= capacity) {
            if (!full) {
                full = true;
                log.warn("Mention recovery has reported {} faulty messages at ERROR; further ones are logged at DEBUG"
                    + " only, and message-faults-total counts them all", capacity);
            }
            return false;
        }
        reported.add(message);
        return true;
    }
}
