package io.outboxrelay.common;

import java.util.Locale;
import java.util.Map;
import org.apache.kafka.connect.source.SourceTaskContext;

/**
 * Whether, at the start of a poll, Connect has committed every list the task handed out before, delivering their
 * acknowledgements: then what is still unacknowledged had every record filtered by a transform. Connect commits
 * nothing for such a list and delivers its {@code commitRecord(…, null)} only with some later transaction, so a task
 * that waited for them could wait for ever (docs/exactly-once.md, 3.8).
 *
 * <p>Always with the task's own transactions ({@code transaction.boundary=connector}). Otherwise when Connect called
 * {@code SourceTask.commit()} on the poll thread since the last poll: an exactly-once worker (Connect 4.3) does so
 * right after each transaction it commits, every list with poll boundaries, an all-filtered one included, and at the
 * interval's end with interval boundaries, whatever {@code exactly.once.support} says; an at-least-once worker calls it
 * from its offset committer's thread, and on the task thread only for its final commit, after which no poll comes.
 * Never under {@code errors.tolerance=all}, where a null is a dropped record, not a filtered one.
 */
public final class ListCommits {
    private final boolean ownTransactions;
    private final boolean nullIsFiltered;
    private volatile Thread pollThread;
    private volatile boolean committedSincePoll;

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
            committedSincePoll = true;
        }
    }

    /**
     * Task thread, at the start of a poll, before it hands out anything: whether what is unacknowledged from earlier
     * lists was filtered whole.
     */
    public boolean atPoll() {
        pollThread = Thread.currentThread();
        boolean committed = committedSincePoll;
        committedSincePoll = false;
        return ownTransactions || nullIsFiltered && committed;
    }
}
