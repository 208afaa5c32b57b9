package io.outboxrelay.common;

import java.util.Locale;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.source.SourceTaskContext;

/**
 * Whether Connect commits each list a source task returns, and hands the task its acknowledgements, before it
 * polls the task again. Then, at the start of a poll, what is still unacknowledged from earlier lists had every
 * record filtered by a transform: Connect commits nothing for such a list and delivers its
 * {@code commitRecord(…, null)} only with some later transaction, so a task that waited for them could wait for
 * ever (docs/exactly-once.md, 3.8).
 *
 * <p>True with the task's own transactions ({@code transaction.boundary=connector}). With poll boundaries (the
 * default) only once Connect has shown that it runs the task in transactions, whatever {@code exactly.once.support}
 * says (a worker with exactly-once support runs every source task so, one without it none, and a standalone worker
 * ignores the key): a {@code commit()} or an acknowledgement on the task's own thread. An exactly-once worker calls
 * {@code commit()} on the task thread after every list it dispatched, an all-filtered one included, and hands over
 * acknowledgements there as a transaction commits; an at-least-once worker calls {@code commit()} from its offset
 * committer's thread and acknowledges from the producer's. Never with {@code interval} boundaries (a list may wait
 * for the interval's commit) nor under {@code errors.tolerance=all}, where a null is a dropped record, not a filtered
 * one.
 */
public final class ListCommits {
    private final boolean ownTransactions;
    private final boolean mayProve;
    private volatile Thread pollThread;
    private volatile boolean transactionsShown;

    private ListCommits(boolean ownTransactions, boolean mayProve) {
        this.ownTransactions = ownTransactions;
        this.mayProve = mayProve;
    }

    public static ListCommits of(SourceTaskContext context, Map<String, String> props) {
        String boundary = props.getOrDefault("transaction.boundary", "").strip().toLowerCase(Locale.ROOT);
        String tolerance = props.getOrDefault("errors.tolerance", "").strip().toLowerCase(Locale.ROOT);
        return new ListCommits(context != null && context.transactionContext() != null,
            (boundary.isEmpty() || "poll".equals(boundary)) && !"all".equals(tolerance));
    }

    /** Task thread, at the start of each {@code poll()}. */
    public void polling() {
        pollThread = Thread.currentThread();
    }

    /** From {@code SourceTask.commit()}, on whichever thread Connect calls it. */
    public void committed() {
        shownIfOnPollThread();
    }

    /** From {@code commitRecord}: an acknowledgement, on whichever thread Connect delivers it. */
    public void acknowledged(RecordMetadata metadata) {
        if (metadata != null) {
            shownIfOnPollThread();
        }
    }

    private void shownIfOnPollThread() {
        if (mayProve && !transactionsShown && Thread.currentThread() == pollThread) {
            transactionsShown = true;
        }
    }

    /** Task thread: whether what is unacknowledged at this poll was filtered whole. */
    public boolean beforeNextPoll() {
        return ownTransactions || transactionsShown;
    }
}
