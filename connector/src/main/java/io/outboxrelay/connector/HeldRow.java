package io.outboxrelay.connector;

import java.util.Map;

/**
 * One row a relay task holds, in the one state it is in and with what that state needs; {@link HeldRows} keeps
 * them and moves them between states. A row enters in flight (its records handed to Connect) or as a lost claim
 * (its claim failed before it reached Connect), and leaves once the write its state calls for commits.
 */
sealed interface HeldRow {
    /** The states, in the order a row can pass through them; each has one store write (docs/relay-internals.md). */
    enum State {
        /** Its records are with Connect; acknowledgements settle it on the producer's thread. */
        IN_FLIGHT,
        /** Every record acknowledged: waits for its stamp, which rides with the next claim or goes alone. */
        ACKED,
        /** A record failed, an attempt is left: waits for its release with a backoff. */
        TO_RELEASE,
        /** Refused before producing, failed at its last attempt, or past the attempts: waits for its poisoning. */
        TO_POISON,
        /** Leased by a claim that failed before its rows reached Connect: waits to be given back, attempt returned. */
        LOST_CLAIM;

        private static final Map<Class<?>, State> OF_TYPE = Map.of(InFlight.class, IN_FLIGHT, Acked.class, ACKED,
            ToRelease.class, TO_RELEASE, ToPoison.class, TO_POISON, LostClaim.class, LOST_CLAIM);
    }

    long seq();

    default State state() {
        return State.OF_TYPE.get(getClass());
    }

    /** Whether the task keeps the row's lease: extended, and never taken back by a recovery. */
    default boolean leaseKept() {
        return !(this instanceof LostClaim);
    }

    /** The row's records are with Connect: how many are still unacknowledged, and their outcomes so far. */
    record InFlight(long seq, PendingRow row) implements HeldRow { }

    /** Every record acknowledged: the stamp to write, with the row's fanout. */
    record Acked(long seq, OutboxStore.Stamp stamp) implements HeldRow { }

    /** A record failed: the release to write, with its backoff and error. */
    record ToRelease(long seq, OutboxStore.Release release) implements HeldRow { }

    /** The poisoning to write, with its reason. */
    record ToPoison(long seq, OutboxStore.Poison poison) implements HeldRow { }

    /** A failed claim's row: the give-back to write, at once and with its attempt returned. */
    record LostClaim(long seq, OutboxStore.Release giveBack) implements HeldRow { }

    static HeldRow inFlight(PendingRow row) {
        return new InFlight(row.seq(), row);
    }

    static HeldRow acked(PendingRow row) {
        return new Acked(row.seq(), new OutboxStore.Stamp(row.seq(), row.fanoutJson(), row.row().id()));
    }

    static HeldRow toRelease(OutboxStore.Release release) {
        return new ToRelease(release.seq(), release);
    }

    static HeldRow toPoison(long seq, String reason, int attempts) {
        return new ToPoison(seq, new OutboxStore.Poison(seq, reason, attempts));
    }

    static HeldRow lostClaim(long seq) {
        return new LostClaim(seq, OutboxStore.Release.now(seq, true));
    }
}
