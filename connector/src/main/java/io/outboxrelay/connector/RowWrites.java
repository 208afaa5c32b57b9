package io.outboxrelay.connector;

import java.sql.SQLException;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the fate of the rows a task holds ({@link HeldRows}) to the table, except the stamps, which ride
 * with the next claim ({@link ClaimStep}): releases with a backoff or poisonings for failed rows,
 * give-backs for rows a failure lost, and at stop the last stamps and the release of everything in flight.
 * Whatever write fails, the rows stay held and the write is made again on the next pass.
 */
final class RowWrites {
    private static final Logger log = LoggerFactory.getLogger(RowWrites.class);
    /** Bounds {@link #attemptReturned}; lost claim results are rare, a few batches per outage. */
    private static final int MAX_ATTEMPTS_RETURNED_REMEMBERED = 100_000;

    private final OutboxStore store;
    private final HeldRows held;
    private final RejectionRules rules;
    private final PoisonRecords poisonRecords;
    private final ClaimPacer pacer;
    private final RelayMetrics metrics;
    private final Clock clock;
    private final String wakeChannel;
    private final StrictOrder order;
    /**
     * Rows whose lost claim result this incarnation gave the attempt back for already (once per row); they are
     * no longer held, so this is the recovery's memory, not a state of {@link HeldRows}.
     */
    private final Set<Long> attemptReturned = new HashSet<>();

    /**
     * @param wakeChannel the channel to NOTIFY after leases were given back at stop; null with LISTEN off
     * @param order       told of every row poisoned (under outbox.ordering=strict it releases its subject)
     */
    RowWrites(OutboxStore store, HeldRows held, RejectionRules rules, PoisonRecords poisonRecords,
              ClaimPacer pacer, RelayMetrics metrics, Clock clock, String wakeChannel, StrictOrder order) {
        this.store = store;
        this.held = held;
        this.rules = rules;
        this.poisonRecords = poisonRecords;
        this.pacer = pacer;
        this.metrics = metrics;
        this.clock = clock;
        this.wakeChannel = wakeChannel;
        this.order = order;
    }

    /**
     * Takes in the rows that settled and writes what failed: failed rows are poisoned at their last attempt and
     * otherwise released with a backoff; acked rows wait for the next claim's stamp.
     */
    void settle() throws SQLException {
        held.settle(this::afterFailure);
        poisonings();
        List<OutboxStore.Release> releases = held.flush(HeldRows.RELEASES, r -> {
            store.release(r);
            return r;
        });
        if (releases != null) {
            metrics.failed(releases.size());
        }
    }

    /** The poison-or-retry rule: what becomes of a row a record of which failed. */
    private HeldRow afterFailure(PendingRow row) {
        String poison = rules.poisonAfterFailure(row);
        if (poison != null) {
            return HeldRow.toPoison(row.seq(), poison, row.row().attempts());
        }
        long delay = rules.retryDelayMs(row);
        log.warn("Outbox row seq={} id={} was not delivered (attempt {} of {}): {}; retrying it alone in {} ms",
            row.seq(), row.row().id(), row.row().attempts(), rules.maxAttempts(), row.failure(), delay);
        return HeldRow.toRelease(new OutboxStore.Release(row.seq(), false, delay, row.failure()));
    }

    /** The acked rows no claim carried yet, stamped on their own (at stop, or while no claim can run). */
    void stampAlone() throws SQLException {
        if (held.has(HeldRow.State.ACKED)) {
            long start = clock.millis();
            metrics.stamped(held.flush(HeldRows.STAMPS, store::stamp), clock.millis() - start);
        }
    }

    /**
     * Poisons the rows waiting for it in one statement; logs each once and describes it on the poison topic. The rows
     * the statement left alone, no longer as this task claimed them (PoisonRows), are said in one WARN.
     */
    void poisonings() throws SQLException {
        Set<Long> asked = new TreeSet<>();
        List<PoisonedRow> poisoned = held.flush(HeldRows.POISONS, rows -> {
            rows.forEach(r -> asked.add(r.seq()));
            return store.poison(rows);
        });
        if (poisoned == null) {
            return;
        }
        poisoned.forEach(p -> asked.remove(p.seq()));
        if (!asked.isEmpty()) {
            log.warn("Outbox rows seq={} were due to be poisoned by this task, but the database left them alone: they are"
                + " no longer as this task claimed them. Another claimer took them (after this task's lease ran out, as"
                + " when Connect does not poll it for outbox.lease.ms, or after it gave them back), or they were stamped,"
                + " poisoned, requeued or deleted meanwhile, or an earlier try of this poisoning wrote them and its result"
                + " was lost with the connection. The row as it is now tells their outcome.", asked);
        }
        for (PoisonedRow p : poisoned) {
            log.error("Poisoned outbox row seq={} id={} type={} after {} attempts: {}. It is left out of every"
                + " claim; SELECT events_requeue({}) puts it back in line.", p.seq(), p.id(), p.type(),
                p.attempts(), p.reason(), p.seq());
        }
        metrics.poisoned(poisoned.size());
        order.poisoned(poisoned);
        poisonRecords.add(poisoned);
    }

    /**
     * After a database error: rows of a failed claim that never reached Connect, and rows of a claim that
     * committed while its result was lost with the connection, go back in line.
     */
    void recoverLostLeases() throws SQLException {
        giveBackLostClaims();
        // the attempt of a lost claim's rows is given back (a flapping database must not push good rows
        // towards poisoning), but once per row: rows whose claims keep losing their result keep counting
        if (attemptReturned.size() > MAX_ATTEMPTS_RETURNED_REMEMBERED) {
            attemptReturned.clear();
        }
        List<OutboxStore.TakenBack> takenBack = store.takeBackUnknownLeases(held.seqs(), attemptReturned);
        for (OutboxStore.TakenBack row : takenBack) {
            attemptReturned.add(row.seq());
            String reason = rules.unreadPastLimit(row.seq(), row.attempts());
            if (reason != null) {
                held.poison(row.seq(), reason, row.attempts());
            }
        }
        if (!takenBack.isEmpty()) {
            log.info("Recovered {} rows whose claim result was lost with the connection; they are claimed again",
                takenBack.size());
            pacer.request(clock.millis());
        }
        poisonings();
    }

    /**
     * Rows of a claim that failed before they reached Connect: never attempted as far as Connect knows.
     *
     * @return whether there were any
     */
    private boolean giveBackLostClaims() throws SQLException {
        return held.flush(HeldRows.LOST_CLAIMS, lost -> {
            store.release(lost);
            return lost;
        }) != null;
    }

    /**
     * At stop: lost claims given back, then every row still in flight released at once
     * ({@link AttemptAtStop} says which keep their attempt), and the tasks woken to claim them: a restarted
     * incarnation that started before this one stopped is waiting. Their next owner delivers them again: a
     * consumer may see them twice.
     */
    void releaseAtStop() throws SQLException {
        boolean gaveBack = true; // until known: a failure midway may have given some back
        try {
            boolean lostClaims = giveBackLostClaims();
            List<OutboxStore.Release> inFlight = held.flushInFlightAtStop(releases -> {
                if (!releases.isEmpty()) {
                    store.release(releases);
                }
                return releases;
            });
            if (!inFlight.isEmpty()) {
                log.info("Released the leases of {} rows still in flight at stop; they are claimed again at once ({}"
                    + " of them, which may be what stopped the task, keep their attempt)", inFlight.size(),
                    inFlight.stream().filter(r -> !r.returnAttempt()).count());
            }
            gaveBack = lostClaims || !inFlight.isEmpty();
        } finally {
            wakeAtStop(gaveBack);
        }
    }

    /**
     * The last step of a stop: the other tasks of the table are woken when this one leaves rows to them: rows it
     * gave back or kept leased for its next incarnation, or, with outbox.ordering=strict, any row it stamped (it may
     * head a subject whose next row another incarnation could not claim before). A quiet task's looks would claim
     * them within {@link ClaimPacer#LOOK_INTERVAL_MS}; the NOTIFY saves that wait.
     */
    private void wakeAtStop(boolean gaveBack) {
        if (!(gaveBack || order.strict()) || wakeChannel == null) {
            return;
        }
        try {
            store.wake(wakeChannel);
        } catch (SQLException e) {
            log.warn("Could not wake the other tasks of the table at stop ({}); the rows it left are claimed at the"
                + " next look of the task whose share they are in (a quiet task claims every {} ms, every"
                + " outbox.poll.interval.ms while it polls)", e.getMessage(), ClaimPacer.LOOK_INTERVAL_MS);
        }
    }

    /**
     * At stop with connector-defined transaction boundaries: lost claims given back, and the rows still in flight
     * keep their lease (their transaction may have committed: the next incarnation reconciles, then takes them
     * over), their attempt returned as {@link AttemptAtStop} says (docs/exactly-once.md, 3.7).
     */
    void keepLeasesAtStop() throws SQLException {
        boolean gaveBack = true; // until known: a failure midway may have given some back
        try {
            gaveBack = giveBackLostClaims();
            List<OutboxStore.Release> inFlight = held.flushInFlightAtStop(releases -> {
                List<Long> returned = returnedAttempts(releases);
                if (!returned.isEmpty()) {
                    store.returnAttempts(returned);
                }
                return releases;
            });
            if (!inFlight.isEmpty()) {
                gaveBack = true; // for the next incarnation, which may have started, taken its horizon and gone quiet
                log.info("Kept the leases of {} rows still in flight at stop, their transaction's outcome unknown here;"
                    + " the next start of this task stamps those a committed offset names and produces the others ({}"
                    + " of them got their attempt back)", inFlight.size(), returnedAttempts(inFlight).size());
            }
        } finally {
            wakeAtStop(gaveBack);
        }
    }

    private static List<Long> returnedAttempts(List<OutboxStore.Release> releases) {
        return releases.stream().filter(OutboxStore.Release::returnAttempt).map(OutboxStore.Release::seq).toList();
    }
}
