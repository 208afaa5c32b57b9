package io.outboxrelay.connector;

import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pass's one statement and what follows from it: the acknowledged rows stamped and a claim sized by
 * {@link ClaimSizer} in one round trip, its outcome told to the {@link ClaimPacer}, the rows
 * {@link RejectionRules} refuse poisoned before anything of the claim is handed out, and the others handed
 * to Connect as records.
 */
final class ClaimStep {
    private static final Logger log = LoggerFactory.getLogger(ClaimStep.class);

    private final OutboxStore store;
    private final HeldRows held;
    private final RowWrites writes;
    private final OutboxRecordFactory factory;
    private final RecordOffsets.Naming naming;
    private final RejectionRules rules;
    private final ClaimSizer sizer;
    private final ClaimPacer pacer;
    private final RelayMetrics metrics;
    private final Clock clock;
    /** Rows taken over from earlier incarnations since the run of them began (they come one per claim). */
    private int takenOverRun;

    ClaimStep(OutboxStore store, HeldRows held, RowWrites writes, OutboxRecordFactory factory,
              RecordOffsets.Naming naming, RejectionRules rules, ClaimSizer sizer, ClaimPacer pacer,
              RelayMetrics metrics, Clock clock) {
        this.store = store;
        this.held = held;
        this.writes = writes;
        this.factory = factory;
        this.naming = naming;
        this.rules = rules;
        this.sizer = sizer;
        this.pacer = pacer;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Stamps what was acknowledged, claims, and adds the records of what it claimed to {@code out}. */
    void run(List<SourceRecord> out, long now) throws SQLException {
        int limit = sizer.next();
        boolean stamps = held.has(HeldRow.State.ACKED);
        OutboxStore.PassResult result = held.flushEvenIfNone(HeldRows.STAMPS,
            acked -> store.pass(new OutboxStore.Pass(acked, limit)));
        if (stamps) {
            metrics.stamped(result.stamped(), clock.millis() - now);
        }
        OutboxStore.Claim claim = result.claim();
        List<ClaimedRow> accepted = new ArrayList<>();
        try {
            boolean more = claim.more(limit);
            sizer.claimed(claim.full(limit), claim.retry(), more);
            metrics.claimSize(sizer.next(), limit);
            pacer.claimed(clock.millis(), claim.rows().size(), more);
            if (claim.rows().isEmpty()) {
                return;
            }
            count(claim.rows(), now);
            for (ClaimedRow row : claim.rows()) {
                String reason = rules.beforeProducing(row);
                if (reason != null) {
                    held.poison(row.seq(), reason, row.attempts());
                } else {
                    accepted.add(row);
                }
            }
            // before any row is handed out: if the poison write fails, nothing of this claim is in flight
            writes.poisonings();
        } catch (SQLException e) {
            // leased, attempt counted, none reached Connect: given back after the backoff with that attempt
            // returned (rows to poison stay held until their poisoning commits)
            held.claimLost(claim.rows());
            throw e;
        }
        List<PendingRow> deliverable = new ArrayList<>(accepted.size());
        for (ClaimedRow row : accepted) {
            deliverable.add(factory.pending(row));
        }
        RecordOffsets offsets = naming.forClaim(held, deliverable); // names the earlier lists' rows: first
        deliverable.forEach(held::handOut);
        factory.records(deliverable, out, offsets);
    }

    private void count(List<ClaimedRow> rows, long claimStartedAt) {
        int retried = 0;
        int expired = 0;
        int takenOver = 0;
        for (ClaimedRow row : rows) {
            retried += row.attempts() > 1 ? 1 : 0;
            expired += row.leaseExpired() ? 1 : 0;
            takenOver += row.takenOver() ? 1 : 0;
        }
        metrics.claimed(rows.size(), clock.millis() - claimStartedAt);
        metrics.retried(retried);
        metrics.leaseExpired(expired);
        if (takenOver > 0 && takenOverRun == 0) {
            log.info("Claiming the rows an earlier incarnation of this task had leased (it stopped without releasing"
                + " them, or failed); they are retried one by one, in seq order");
        } else if (takenOver == 0 && takenOverRun > 0) {
            log.info("Claimed {} rows an earlier incarnation of this task had leased", takenOverRun);
            takenOverRun = 0;
        }
        takenOverRun += takenOver;
    }
}
