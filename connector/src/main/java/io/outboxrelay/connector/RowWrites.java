package io.outboxrelay.connector;

import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
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
    /** Covers a database clock a little ahead of the worker's when a released row falls due. */
    private static final long RETRY_CLOCK_MARGIN_MS = 100;

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
     * Writes what failed: failed rows are poisoned at their last attempt and otherwise released with a
     * backoff; acknowledged rows wait for the next claim's stamp.
     */
    void settle() throws SQLException {
        for (PendingRow row : held.settle()) {
            String poison = rules.poisonAfterFailure(row);
            if (poison != null) {
                held.poisonLater(row.seq(), poison);
            } else {
                long delay = rules.retryDelayMs(row);
                held.releaseLater(row, delay);
                log.warn("Outbox row seq={} id={} was not delivered (attempt {} of {}): {}; retrying it alone in {} ms",
                    row.seq(), row.row().id(), row.row().attempts(), rules.maxAttempts(), row.failure(), delay);
            }
        }
        if (!held.hasFailuresDue()) {
            return;
        }
        poisonings();
        List<OutboxStore.Release> releases = held.releasesToWrite();
        if (!releases.isEmpty()) {
            store.release(releases);
            held.releasesWritten();
            // the database's next_attempt_at was set during the statement: look no earlier than after it
            long releasedAt = clock.millis() + RETRY_CLOCK_MARGIN_MS;
            releases.forEach(r -> pacer.retryAt(releasedAt + r.delayMs()));
            metrics.failed(releases.size());
        }
    }

    /** The acknowledged rows no claim carried yet, stamped on their own (at stop, or while no claim can run). */
    void stampAlone() throws SQLException {
        List<OutboxStore.Stamp> stamps = held.stampsToWrite();
        if (!stamps.isEmpty()) {
            long start = clock.millis();
            int stamped = store.stamp(stamps);
            held.stamped();
            metrics.stamped(stamped, clock.millis() - start);
        }
    }

    /** Poisons the rows waiting for it in one statement; logs each once and describes it on the poison topic. */
    void poisonings() throws SQLException {
        List<OutboxStore.Poison> poisons = held.poisonsToWrite();
        if (poisons.isEmpty()) {
            return;
        }
        List<PoisonedRow> poisoned = store.poison(poisons);
        held.poisonsWritten();
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
        List<OutboxStore.TakenBack> takenBack = store.takeBackUnknownLeases(held.seqs(), held.attemptReturnedOnce());
        for (OutboxStore.TakenBack row : takenBack) {
            held.attemptReturned(row.seq());
            String reason = rules.unreadPastLimit(row.seq(), row.attempts());
            if (reason != null) {
                held.poisonLater(row.seq(), reason);
            }
        }
        if (!takenBack.isEmpty()) {
            log.info("Recovered {} rows whose claim result was lost with the connection; they are claimed again",
                takenBack.size());
            pacer.request(clock.millis());
        }
        poisonings();
    }

    /** Rows of a claim that failed before they reached Connect: never attempted as far as Connect knows. */
    private void giveBackLostClaims() throws SQLException {
        List<OutboxStore.Release> lost = held.claimsLostToGiveBack();
        if (!lost.isEmpty()) {
            store.release(lost);
            held.claimsLostGivenBack();
        }
    }

    /**
     * At stop: lost claims given back, then every row still in flight released at once
     * ({@link AttemptAtStop} says which keep their attempt), and the tasks woken to claim them: a restarted
     * incarnation that started before this one stopped is waiting. Their next owner delivers them again: a
     * consumer may see them twice.
     */
    void releaseAtStop() throws SQLException {
        boolean lostClaims = !held.claimsLostToGiveBack().isEmpty();
        giveBackLostClaims();
        List<OutboxStore.Release> inFlight = held.inFlightAtStop();
        if (!inFlight.isEmpty()) {
            store.release(inFlight);
            log.info("Released the leases of {} rows still in flight at stop; they are claimed again at once ({}"
                + " of them, which may be what stopped the task, keep their attempt)", inFlight.size(),
                inFlight.stream().filter(r -> !r.returnAttempt()).count());
        }
        held.clearInFlight();
        if ((lostClaims || !inFlight.isEmpty()) && wakeChannel != null) {
            try {
                store.wake(wakeChannel);
            } catch (SQLException e) {
                log.warn("Could not NOTIFY {} after giving leases back at stop ({}); the rows are claimed at the next"
                    + " look or sweep", wakeChannel, e.getMessage());
            }
        }
    }

    /**
     * At stop with connector-defined transaction boundaries: lost claims given back, and the rows still in flight
     * keep their lease (their transaction may have committed: the next incarnation reconciles, then takes them
     * over), their attempt returned as {@link HeldRows#inFlightAtStop} says (docs/exactly-once.md, 3.7).
     */
    void keepLeasesAtStop() throws SQLException {
        giveBackLostClaims();
        List<OutboxStore.Release> inFlight = held.inFlightAtStop();
        List<Long> returned = inFlight.stream().filter(OutboxStore.Release::returnAttempt).map(OutboxStore.Release::seq)
            .toList();
        if (!returned.isEmpty()) {
            store.returnAttempts(returned);
        }
        if (!inFlight.isEmpty()) {
            log.info("Kept the leases of {} rows still in flight at stop, their transaction's outcome unknown here;"
                + " the next start of this task stamps those a committed offset names and produces the others ({}"
                + " of them got their attempt back)", inFlight.size(), returned.size());
        }
        held.clearInFlight();
    }
}
