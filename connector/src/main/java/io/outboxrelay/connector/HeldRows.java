package io.outboxrelay.connector;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Every row a relay task holds, from its claim until its stamp, release or poisoning commits, and the
 * transitions between. A row is held while its records are in flight (acknowledgements settle it on the
 * producer's thread), once acknowledged until its stamp commits, once failed until its release or poisoning
 * commits, and, for rows of a claim that failed before they reached Connect, until they are given back.
 * Whatever write fails, the rows stay held (their leases extended) and are written again on the next pass.
 * Task thread only, except {@link #acknowledged}.
 */
final class HeldRows {
    /** Bounds {@link #attemptReturned}; lost claim results are rare, a few batches per outage. */
    private static final int MAX_ATTEMPTS_RETURNED_REMEMBERED = 100_000;

    private final FanOutAckTracker inFlight;
    private final List<PendingRow> acknowledged = new ArrayList<>();
    private final Map<Long, String> toPoison = new LinkedHashMap<>();
    private final Map<Long, OutboxStore.Release> toRelease = new LinkedHashMap<>();
    private final List<Long> neverHandedOut = new ArrayList<>();
    /** Rows whose lost claim this incarnation gave the attempt back for already (once per row). */
    private final Set<Long> attemptReturned = new HashSet<>();
    /**
     * Rows of the records the last poll() returned. Connect polls again only once it has converted and sent
     * every record of the previous return; until then a converter or transform error in the batch, or a
     * broker's rejection of an earlier record, stops the task before the next poll.
     */
    private final Set<Long> awaitingDispatch = new HashSet<>();
    /** The poll() calls so far: a row remembers the one that handed it out. */
    private long polls;
    /** The poll() that handed out the latest rows. */
    private long lastHandOutPoll = -1;

    HeldRows(boolean toleratesAllErrors, Runnable onRowSettled) {
        this.inFlight = new FanOutAckTracker(toleratesAllErrors, onRowSettled);
    }

    /** Producer I/O thread: a record was acknowledged (or dropped: null metadata). */
    void acknowledged(OutboxRecord record, RecordMetadata metadata) {
        inFlight.onCommit(record, metadata);
    }

    /** claimed -> in flight: the row's records go to Connect with this poll. */
    void handOut(PendingRow row) {
        row.handedOut(polls);
        lastHandOutPoll = polls;
        awaitingDispatch.add(row.seq());
        inFlight.track(row);
    }

    /** Connect polls again: it sent every record returned before. */
    void dispatched() {
        polls++;
        awaitingDispatch.clear();
    }

    /** claimed -> to give back: a claim failed before its rows reached Connect (their attempt is returned). */
    void claimLost(Collection<ClaimedRow> rows) {
        for (ClaimedRow row : rows) {
            if (!toPoison.containsKey(row.seq())) {
                neverHandedOut.add(row.seq());
            }
        }
    }

    /** -> to poison, with the reason. */
    void poisonLater(long seq, String reason) {
        toPoison.put(seq, reason);
    }

    boolean poisonPending(long seq) {
        return toPoison.containsKey(seq);
    }

    List<OutboxStore.Poison> poisonsToWrite() {
        return toPoison.entrySet().stream().map(e -> new OutboxStore.Poison(e.getKey(), e.getValue())).toList();
    }

    void poisonsWritten() {
        toPoison.clear();
    }

    /**
     * in flight -> acknowledged (held until stamped) or failed: drains the rows whose every record was
     * settled and returns those that failed; the caller decides their fate ({@link #poisonLater},
     * {@link #releaseLater}).
     */
    List<PendingRow> settle() {
        List<PendingRow> failed = new ArrayList<>();
        for (PendingRow row : inFlight.drainSettled()) {
            (row.failed() ? failed : acknowledged).add(row);
        }
        return failed;
    }

    /** failed -> to release, with a delay before the next claim. */
    void releaseLater(PendingRow row, long delayMs) {
        toRelease.put(row.seq(), new OutboxStore.Release(row.seq(), false, delayMs, row.failure()));
    }

    List<OutboxStore.Release> releasesToWrite() {
        return List.copyOf(toRelease.values());
    }

    void releasesWritten() {
        toRelease.clear();
    }

    List<OutboxStore.Stamp> stampsToWrite() {
        return acknowledged.stream().map(r -> new OutboxStore.Stamp(r.seq(), r.fanoutJson(), r.row().id())).toList();
    }

    void stamped() {
        acknowledged.clear();
    }

    /** Rows a failed claim leased without handing them to Connect: given back at once, attempt returned. */
    List<OutboxStore.Release> claimsLostToGiveBack() {
        return neverHandedOut.stream().map(seq -> OutboxStore.Release.now(seq, true)).toList();
    }

    void claimsLostGivenBack() {
        neverHandedOut.clear();
    }

    /**
     * Rows whose attempt a lost claim result returned once already: they keep it the next time, so rows
     * whose claims keep losing their result are counted towards poisoning.
     */
    Collection<Long> attemptReturnedOnce() {
        if (attemptReturned.size() > MAX_ATTEMPTS_RETURNED_REMEMBERED) {
            attemptReturned.clear();
        }
        return attemptReturned;
    }

    void attemptReturned(long seq) {
        attemptReturned.add(seq);
    }

    /** Whether poisonings or releases wait to be written (rows just failed, or their write failed before). */
    boolean hasFailuresDue() {
        return !toPoison.isEmpty() || !toRelease.isEmpty();
    }

    /** Producer thread may add to it: whether rows settled that the next pass has yet to take in. */
    boolean hasSettledRows() {
        return inFlight.hasSettled();
    }

    /** Whether acknowledged rows wait for their stamp. */
    boolean hasStampsDue() {
        return !acknowledged.isEmpty();
    }

    /** Every row this task holds: its lease must be kept, and a recovery must not give it back. */
    List<Long> seqs() {
        List<Long> out = new ArrayList<>(inFlight.inFlightCount() + acknowledged.size() + toPoison.size()
            + toRelease.size());
        inFlight.inFlight().forEach(row -> out.add(row.seq()));
        acknowledged.forEach(row -> out.add(row.seq()));
        out.addAll(toPoison.keySet());
        out.addAll(toRelease.keySet());
        return out;
    }

    int inFlightCount() {
        return inFlight.inFlightCount();
    }

    /** Whether another claim fits: fewer rows in flight than {@code maxRows}, taking less than {@code maxBytes}. */
    boolean hasRoom(int maxRows, long maxBytes) {
        return inFlight.inFlightCount() < maxRows && inFlight.inFlightBytes() < maxBytes;
    }

    /**
     * The rows handed to Connect whose stamp has not committed: in flight, or acknowledged and waiting for the
     * stamp. Every record made after this call may name them (docs/exactly-once.md, 3.3).
     */
    long[] producedNotStamped() {
        long[] out = new long[inFlight.inFlightCount() + acknowledged.size()];
        int i = 0;
        for (PendingRow row : inFlight.inFlight()) {
            out[i++] = row.seq();
        }
        for (PendingRow row : acknowledged) {
            out[i++] = row.seq();
        }
        return out;
    }

    /**
     * in flight -> settled as filtered: with connector-defined transaction boundaries, rows still in flight when
     * Connect polls again are rows every record of which a transform filtered (any other list's commit delivered
     * its acknowledgements first); their late null acknowledgements then change nothing.
     *
     * @return how many rows this settled
     */
    int settleInFlightAsFiltered() {
        return inFlight.settleOpenSlotsAsFiltered();
    }

    /**
     * At stop, the rows still in flight, to release at once ({@link AttemptAtStop} says which keep their attempt,
     * and why).
     */
    List<OutboxStore.Release> inFlightAtStop() {
        AttemptAtStop rule = new AttemptAtStop(awaitingDispatch, inFlight.ackedThroughPoll(), lastHandOutPoll);
        return inFlight.inFlight().stream().map(rule::release).toList();
    }

    /** Forgets the rows in flight (their leases were released). */
    void clearInFlight() {
        inFlight.clear();
    }
}
