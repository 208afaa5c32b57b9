package io.outboxrelay.mentions;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The state of one recovery pass: its kind, the pass-local seq floor (the lowest long at the start, the last seq
 * read after each batch, dropped with the pass: never persisted, so a late-committing lower seq is
 * found by the next pass) and the counts its summary line reports.
 */
final class MentionPass {
    private final ScanTrigger.Kind kind;
    private final long startedNanos;
    private final int batchSize;
    private long floorSeq = Long.MIN_VALUE;
    /** How many messages the next batch reads: the batch size, less after a batch whose plan stopped short. */
    private int limit;
    private boolean lastBatchFull;
    private int batches;
    private int scanned;
    private int marked;
    private int faults;
    private int undelivered;
    private final Map<Arm, Integer> records = new EnumMap<>(Arm.class);

    MentionPass(ScanTrigger.Kind kind, int batchSize, long startedNanos) {
        this.kind = kind;
        this.batchSize = batchSize;
        this.limit = batchSize;
        this.startedNanos = startedNanos;
    }

    ScanTrigger.Kind kind() {
        return kind;
    }

    long floorSeq() {
        return floorSeq;
    }

    /** How many messages to read for the next batch. */
    int limit() {
        return limit;
    }

    /**
     * Advances the floor past the messages of a batch just planned, of the {@code read} it read; a short batch means
     * the pass has seen everything, unless the plan stopped short of what was read (the rest comes with the next
     * batch). A plan that stopped short makes the next read as long as this plan (its messages make many records
     * each: reading more would read them, and load their channels' members, again and again); one that did not lets
     * the next read grow back, doubling, to the batch size.
     */
    void batchRead(List<UnroutedMessage> batch, int read) {
        batches++;
        scanned += batch.size();
        boolean cut = batch.size() < read;
        lastBatchFull = cut || read >= limit;
        limit = cut ? Math.max(1, batch.size()) : (int) Math.min(batchSize, 2L * limit);
        if (!batch.isEmpty()) {
            floorSeq = batch.get(batch.size() - 1).seq();
        }
    }

    boolean hasMoreBatches() {
        return batches == 0 || lastBatchFull;
    }

    int batches() {
        return batches;
    }

    int scanned() {
        return scanned;
    }

    void marked(int n) {
        marked += n;
    }

    void faults(int n) {
        faults += n;
    }

    void undelivered(int n) {
        undelivered += n;
    }

    void recorded(Arm arm) {
        records.merge(arm, 1, Integer::sum);
    }

    long elapsedMs(long nowNanos) {
        return (nowNanos - startedNanos) / 1_000_000;
    }

    /** The summary's counts, e.g. "scanned 3 messages in 1 batch(es), 2 records (STEER 1, OWED 1, WAKE 0), ...". */
    String summary() {
        int total = records.values().stream().mapToInt(Integer::intValue).sum();
        return "scanned " + scanned + " unrouted message(s) in " + batches + " batch(es), produced " + total
            + " record(s) (STEER " + records.getOrDefault(Arm.STEER, 0) + ", OWED " + records.getOrDefault(Arm.OWED, 0)
            + ", WAKE " + records.getOrDefault(Arm.WAKE, 0) + "), marked " + marked + ", left unrouted "
            + faults + " faulty and " + undelivered + " undelivered";
    }
}
