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
 * <p>True with the task's own transactions ({@code transaction.boundary=connector}). With
 * {@code exactly.once.support=required} and poll boundaries (the default) too, but only once Connect has shown
 * that it runs the task in transactions: an acknowledgement handed over on the task's own thread, which only a
 * transaction's commit does (without exactly-once they come from the producer's thread). The configuration alone
 * does not prove it: a standalone worker, or one whose exactly-once support was turned off after the connector
 * was created, runs the task at least once, where a list may still be on its way at the next poll. Never with
 * {@code requested} or {@code interval} boundaries, where that is always possible.
 */
public final class ListCommits {
    private final boolean ownTransactions;
    private final boolean requiredWithPollBoundaries;
    private volatile Thread pollThread;
    private volatile boolean committedOnPollThread;

    private ListCommits(boolean ownTransactions, boolean requiredWithPollBoundaries) {
        this.ownTransactions = ownTransactions;
        this.requiredWithPollBoundaries = requiredWithPollBoundaries;
    }

    public static ListCommits of(SourceTaskContext context, Map<String, String> props) {
        String support = props.getOrDefault("exactly.once.support", "").strip().toLowerCase(Locale.ROOT);
        String boundary = props.getOrDefault("transaction.boundary", "").strip().toLowerCase(Locale.ROOT);
        return new ListCommits(context != null && context.transactionContext() != null,
            "required".equals(support) && (boundary.isEmpty() || "poll".equals(boundary)));
    }

    /** Task thread, at the start of each {@code poll()}. */
    public void polling() {
        pollThread = Thread.currentThread();
    }

    /** From {@code commitRecord}: an acknowledgement, on whichever thread Connect delivers it. */
    public void acknowledged(RecordMetadata metadata) {
        if (metadata != null && !committedOnPollThread && Thread.currentThread() == pollThread) {
            committedOnPollThread = true;
        }
    }

    /** Task thread: whether what is unacknowledged at this poll was filtered whole. */
    public boolean beforeNextPoll() {
        return ownTransactions || requiredWithPollBoundaries && committedOnPollThread;
    }
}
