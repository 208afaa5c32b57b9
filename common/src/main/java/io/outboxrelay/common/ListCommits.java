package io.outboxrelay.common;

import java.util.Locale;
import java.util.Map;
import org.apache.kafka.connect.source.SourceTaskContext;

/**
 * What a source task may take for filtered at the start of a poll: records Connect will acknowledge only with some
 * later transaction, because a transform filtered every record of their list and Connect commits nothing for such a
 * list, so a task that waited for them could wait for ever (docs/exactly-once.md, 3.8).
 *
 * <p>With the task's own transactions ({@code transaction.boundary=connector}): whatever is unacknowledged from earlier
 * lists ({@link Settle#IN_FLIGHT_NOW}). Otherwise only on an exactly-once worker, which shows itself by calling
 * {@code SourceTask.commit()} on the poll thread right after each transaction it commits (Connect 4.3: after every
 * list with poll boundaries, an all-filtered one included; at the interval's end with interval boundaries; at a
 * pause), whatever {@code exactly.once.support} says. Such a commit covers every record sent before it, but a pause
 * can commit while the latest list is still being sent (a send retried), so it is taken to cover only the lists handed
 * out before the last poll, all of which Connect had sent before it polled again: what was already unacknowledged at
 * the last poll and still is after such a commit ({@link Settle#IN_FLIGHT_AT_LAST_POLL}). An at-least-once worker
 * calls {@code commit()} from its offset committer's thread, and on the task thread only for its final commit, after
 * which no poll comes. Never under {@code errors.tolerance=all}, where a null is a dropped record, not a filtered one.
 */
public final class ListCommits {
    /** What to settle as filtered at the start of a poll. */
    public enum Settle {
        /** Nothing. */
        NONE,
        /** Every record still unacknowledged from earlier lists. */
        IN_FLIGHT_NOW,
        /** The records the last poll found unacknowledged, where still unacknowledged. */
        IN_FLIGHT_AT_LAST_POLL
    }

    private final boolean ownTransactions;
    private final boolean nullIsFiltered;
    private volatile Thread pollThread;
    private boolean committedSincePoll;
    private boolean exactlyOnce;

    private ListCommits(boolean ownTransactions, boolean nullIsFiltered) {
        this.ownTransactions = ownTransactions;
        this.nullIsFiltered = nullIsFiltered;
    }

    public static ListCommits of(SourceTaskContext context, Map<String, String> props) {
        String tolerance = props.getOrDefault("errors.tolerance", "").strip().toLowerCase(Locale.ROOT);
        return new ListCommits(context != null && context.transactionContext() != null, !"all".equals(tolerance));
    }

    /** From {@code SourceTask.commit()}, on whichever thread Connect calls it. */
    public void committed() {
        if (Thread.currentThread() == pollThread) {
            committedSincePoll = true; // only the poll thread reads and writes it
            exactlyOnce = true;
        }
    }

    /** Task thread, at the start of a poll, before it hands out anything. */
    public Settle atPoll() {
        pollThread = Thread.currentThread();
        boolean committed = committedSincePoll;
        committedSincePoll = false;
        if (ownTransactions) {
            return Settle.IN_FLIGHT_NOW;
        }
        return nullIsFiltered && committed ? Settle.IN_FLIGHT_AT_LAST_POLL : Settle.NONE;
    }

    /** Task thread: whether to note, at this poll, what is unacknowledged (an exactly-once worker seen, no own transactions). */
    public boolean notesInFlight() {
        return !ownTransactions && nullIsFiltered && exactlyOnce;
    }
}
