package io.outboxrelay.connector;

import io.outboxrelay.connector.HeldRow.State;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Every row a relay task holds, from its claim until its stamp, release or poisoning commits: one map of
 * {@link HeldRow}s, each in one state with what that state needs, and the transitions between them. A group of
 * rows in one state is written with one {@link #flush} and forgotten once the write returned; whatever write
 * fails, the rows stay held in their state (their leases extended) and are written again on the next pass.
 * Each group keeps the order its rows entered its state. Task thread only, except {@link #acknowledged}.
 */
final class HeldRows {
    /** A store write of one group of rows. */
    @FunctionalInterface
    interface Write<T, R> {
        R to(List<T> rows) throws SQLException;
    }

    /** The rows of one state, written together: what each is written as. */
    record Group<S extends HeldRow, T>(State state, Class<S> type, Function<S, T> written) {
    }

    static final Group<HeldRow.Acked, OutboxStore.Stamp> STAMPS =
        new Group<>(State.ACKED, HeldRow.Acked.class, HeldRow.Acked::stamp);
    static final Group<HeldRow.ToRelease, OutboxStore.Release> RELEASES =
        new Group<>(State.TO_RELEASE, HeldRow.ToRelease.class, HeldRow.ToRelease::release);
    static final Group<HeldRow.ToPoison, OutboxStore.Poison> POISONS =
        new Group<>(State.TO_POISON, HeldRow.ToPoison.class, HeldRow.ToPoison::poison);
    static final Group<HeldRow.LostClaim, OutboxStore.Release> LOST_CLAIMS =
        new Group<>(State.LOST_CLAIM, HeldRow.LostClaim.class, HeldRow.LostClaim::giveBack);

    private final Map<Long, HeldRow> rows = new LinkedHashMap<>();
    /** How many rows are in each state, by ordinal; the gauge of rows in flight reads it off the task thread. */
    private final int[] counts = new int[State.values().length];
    /** The producer thread's side: acknowledgements, and the rows they settled. */
    private final FanOutAckTracker acks;
    /** What the rows in flight take as text (ClaimedRow.rowBytes). */
    private long inFlightBytes;
    /**
     * The poll() calls so far: a row remembers the one that handed it out, and the rows of the current one are
     * those of the records the last poll() returned. Connect polls again only once it has converted and sent
     * every record of the previous return; until then a converter or transform error in the batch, or a
     * broker's rejection of an earlier record, stops the task before the next poll.
     */
    private long polls;
    /** The poll() that handed out the latest rows. */
    private long lastHandOutPoll = -1;

    HeldRows(boolean toleratesAllErrors, Runnable onRowSettled) {
        this.acks = new FanOutAckTracker(toleratesAllErrors, onRowSettled);
    }

    /** Producer I/O thread: a record was acknowledged (or dropped: null metadata). */
    void acknowledged(OutboxRecord record, RecordMetadata metadata) {
        acks.onCommit(record, metadata);
    }

    /** claimed -> in flight: the row's records go to Connect with this poll. */
    void handOut(PendingRow row) {
        row.handedOut(polls);
        lastHandOutPoll = polls;
        // a row claimed again while still in flight (its lease lapsed while Connect did not poll, and another claimer
        // took it and let it go) replaces the earlier claim, whose outcome then decides nothing (put): the records of
        // both go out, at least once
        put(HeldRow.inFlight(row));
        inFlightBytes += row.row().rowBytes();
        acks.track(row);
    }

    /** Connect polls again: it sent every record returned before. */
    void dispatched() {
        polls++;
    }

    /**
     * claimed -> lost claim: a claim failed before its rows reached Connect (their attempt is returned); rows it
     * already meant to poison stay to poison.
     */
    void claimLost(Collection<ClaimedRow> claimed) {
        for (ClaimedRow row : claimed) {
            if (!rows.containsKey(row.seq())) {
                put(HeldRow.lostClaim(row.seq()));
            }
        }
    }

    /** -> to poison, with the reason and the row's attempts as the task last saw them. */
    void poison(long seq, String reason, int attempts) {
        put(HeldRow.toPoison(seq, reason, attempts));
    }

    /**
     * in flight -> acked (held until stamped), or whatever {@code afterFailure} makes of a row a record of which
     * failed (to release or to poison): takes in the rows whose every record was settled.
     */
    void settle(Function<PendingRow, HeldRow> afterFailure) {
        for (PendingRow row : acks.drainSettled()) {
            if (!(rows.get(row.seq()) instanceof HeldRow.InFlight f) || f.row() != row) {
                continue; // forgotten at stop, settled already, or an earlier claim of a row claimed again since
            }
            put(row.failed() ? afterFailure.apply(row) : HeldRow.acked(row));
        }
    }

    /**
     * Writes the rows of {@code group} with {@code write}, one call for them all, and forgets them once it
     * returned; when it throws they stay held as they were.
     *
     * @return what {@code write} returned; null, without calling it, when no row is in the group's state
     */
    <S extends HeldRow, T, R> R flush(Group<S, T> group, Write<T, R> write) throws SQLException {
        return count(group.state()) == 0 ? null : flushEvenIfNone(group, write);
    }

    /** As {@link #flush}, calling {@code write} even with no row (the stamps ride with a claim, which runs anyway). */
    <S extends HeldRow, T, R> R flushEvenIfNone(Group<S, T> group, Write<T, R> write) throws SQLException {
        List<T> items = new ArrayList<>(count(group.state()));
        for (HeldRow row : rows.values()) {
            if (row.state() == group.state()) {
                items.add(group.written().apply(group.type().cast(row)));
            }
        }
        R result = write.to(items);
        rows.values().removeIf(row -> row.state() == group.state());
        counts[group.state().ordinal()] = 0;
        return result;
    }

    /**
     * At stop, the rows still in flight: written by {@code write} as releases at once ({@link AttemptAtStop} says
     * which keep their attempt, and why), then forgotten with every acknowledgement not taken in yet.
     */
    <R> R flushInFlightAtStop(Write<OutboxStore.Release, R> write) throws SQLException {
        AttemptAtStop rule = new AttemptAtStop(polls, acks.ackedThroughPoll(), lastHandOutPoll);
        R result = flushEvenIfNone(new Group<>(State.IN_FLIGHT, HeldRow.InFlight.class, f -> rule.release(f.row())),
            write);
        inFlightBytes = 0;
        acks.clear();
        return result;
    }

    /**
     * in flight -> settled as filtered: with connector-defined transaction boundaries, rows still in flight when
     * Connect polls again are rows every record of which a transform filtered (any other list's commit delivered
     * its acknowledgements first); their late null acknowledgements then change nothing.
     *
     * @return how many rows this settled
     */
    int settleInFlightAsFiltered() {
        return acks.settleOpenSlotsAsFiltered(inFlight());
    }

    /** The current poll's number: rows handed out before it have a smaller one. */
    long poll() {
        return polls;
    }

    /** The rows in flight that were handed out before poll {@code poll}: their open slots settled as filtered. */
    int settleAsFilteredIfHandedOutBefore(long poll) {
        List<PendingRow> earlier = new ArrayList<>();
        for (PendingRow row : inFlight()) {
            if (row.handedOutInPoll() < poll) {
                earlier.add(row);
            }
        }
        return acks.settleOpenSlotsAsFiltered(earlier);
    }

    boolean has(State state) {
        return count(state) > 0;
    }

    /** Producer thread may add to it: whether rows settled that the next pass has yet to take in. */
    boolean hasSettledRows() {
        return acks.hasSettled();
    }

    /** Every row whose lease this task keeps: extended, and a recovery must not give it back. */
    List<Long> seqs() {
        List<Long> out = new ArrayList<>(rows.size());
        for (HeldRow row : rows.values()) {
            if (row.leaseKept()) {
                out.add(row.seq());
            }
        }
        return out;
    }

    int inFlightCount() {
        return count(State.IN_FLIGHT);
    }

    /** Whether another claim fits: fewer rows in flight than {@code maxRows}, taking less than {@code maxBytes}. */
    boolean hasRoom(int maxRows, long maxBytes) {
        return inFlightCount() < maxRows && inFlightBytes < maxBytes;
    }

    /**
     * The rows handed to Connect whose stamp has not committed: in flight, or acked and waiting for the stamp.
     * Every record made after this call may name them (docs/exactly-once.md, 3.3).
     */
    long[] producedNotStamped() {
        long[] out = new long[count(State.IN_FLIGHT) + count(State.ACKED)];
        int i = 0;
        for (HeldRow row : rows.values()) {
            if (row.state() == State.IN_FLIGHT || row.state() == State.ACKED) {
                out[i++] = row.seq();
            }
        }
        return out;
    }

    private List<PendingRow> inFlight() {
        List<PendingRow> out = new ArrayList<>(inFlightCount());
        for (HeldRow row : rows.values()) {
            if (row instanceof HeldRow.InFlight f) {
                out.add(f.row());
            }
        }
        return out;
    }

    private int count(State state) {
        return counts[state.ordinal()];
    }

    /** A row enters a state: it goes last in that state's group (a row in flight leaving it takes its bytes along). */
    private void put(HeldRow row) {
        HeldRow old = rows.remove(row.seq());
        if (old != null) {
            counts[old.state().ordinal()]--;
        }
        if (old instanceof HeldRow.InFlight f) {
            inFlightBytes -= f.row().row().rowBytes();
        }
        rows.put(row.seq(), row);
        counts[row.state().ordinal()]++;
    }
}
