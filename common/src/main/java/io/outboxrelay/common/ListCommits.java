package io.outboxrelay.common;

import java.util.Locale;
import java.util.Map;
import org.apache.kafka.connect.source.SourceTaskContext;

/**
 * Whether Connect commits each list a source task returns, and hands the task its acknowledgements, before it
 * polls the task again. Then, at the start of a poll, what is still unacknowledged from earlier lists had every
 * record filtered by a transform: Connect commits nothing for such a list, so it delivers their
 * {@code commitRecord(…, null)} only with some later transaction, and a task that waited for them could wait for
 * ever (docs/exactly-once.md, 3.8). True under exactly-once with the task's own transactions
 * ({@code transaction.boundary=connector}) and with {@code exactly.once.support=required} and poll boundaries (the
 * default). Not with {@code requested} (the worker may run at-least-once, where acknowledgements come later
 * from the producer) nor with {@code interval} boundaries (a list may wait for the interval's commit).
 */
public final class ListCommits {
    private ListCommits() {
    }

    public static boolean beforeNextPoll(SourceTaskContext context, Map<String, String> props) {
        if (context != null && context.transactionContext() != null) {
            return true;
        }
        String support = props.getOrDefault("exactly.once.support", "");
        String boundary = props.getOrDefault("transaction.boundary", "");
        return "required".equals(support.strip().toLowerCase(Locale.ROOT))
            && (boundary.isBlank() || "poll".equals(boundary.strip().toLowerCase(Locale.ROOT)));
    }
}
