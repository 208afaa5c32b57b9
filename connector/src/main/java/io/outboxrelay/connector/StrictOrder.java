package io.outboxrelay.connector;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code outbox.ordering} (docs/ordering.md). In strict mode the claim itself keeps a subject's rows in
 * {@code seq} order ({@code ClaimRows}: a row is claimed only when no earlier row of its subject is still
 * pending), so all the task has to do is say when a poisoned row lets its subject go on: a WARN naming the row
 * and its subject, the metrics {@code strict-subjects-released-total} and {@code strict-last-released-seq}, and a
 * claim at the next chance (nothing else would wake an idle task for the rows just released: no insert NOTIFYs).
 */
final class StrictOrder {
    static final String BEST_EFFORT = "best-effort";
    static final String STRICT = "strict";
    static final List<String> CHOICES = List.of(BEST_EFFORT, STRICT);

    private static final Logger log = LoggerFactory.getLogger(StrictOrder.class);

    private final boolean strict;
    private final RelayMetrics metrics;
    private final Runnable claimSoon;

    /** @param claimSoon asks for a claim at the next chance */
    StrictOrder(boolean strict, RelayMetrics metrics, Runnable claimSoon) {
        this.strict = strict;
        this.metrics = metrics;
        this.claimSoon = claimSoon;
    }

    boolean strict() {
        return strict;
    }

    /** Rows just poisoned: in strict mode each releases its subject, the next row of which the next claim takes. */
    void poisoned(List<PoisonedRow> rows) {
        if (!strict || rows.isEmpty()) {
            return;
        }
        for (PoisonedRow row : rows) {
            log.warn("Strict order: poisoned row seq={} releases subject '{}': the later rows of that subject go out"
                + " without it, so its subscribers never see it in order (events_requeue({}) delivers it after them)",
                row.seq(), row.subject(), row.seq());
            metrics.subjectReleased(row.seq());
        }
        claimSoon.run();
    }
}
