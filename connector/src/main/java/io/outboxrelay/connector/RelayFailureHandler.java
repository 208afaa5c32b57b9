package io.outboxrelay.connector;

import io.outboxrelay.common.Backoff;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.stream.LongStream;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to rows that cannot be delivered: rows rejected before producing (too many attempts,
 * oversized, headers that are not an object) and rows whose records failed. A failed row is released
 * with a backoff that doubles with its attempts and is then retried alone; at
 * {@code outbox.max.attempts} it is poisoned, logged once at ERROR and, when configured, described on
 * {@code outbox.poison.topic}.
 */
final class RelayFailureHandler {
    private static final Logger log = LoggerFactory.getLogger(RelayFailureHandler.class);

    static final Schema POISON_SCHEMA = SchemaBuilder.struct()
        .name("io.outboxrelay.OutboxPoison")
        .version(1)
        .doc("An outbox row the relay set aside after it could not be delivered.")
        .field("id", Schema.STRING_SCHEMA)
        .field("seq", Schema.INT64_SCHEMA)
        .field("type", Schema.STRING_SCHEMA)
        .field("subject", Schema.STRING_SCHEMA)
        .field("attempts", Schema.INT32_SCHEMA)
        .field("reason", Schema.STRING_SCHEMA)
        .field("occurred_at", Timestamp.SCHEMA)
        .field("poisoned_at", Timestamp.SCHEMA)
        .field("table", Schema.STRING_SCHEMA)
        .build();

    private final OutboxClaimer claimer;
    private final OutboxSourceConnectorConfig config;
    private final Backoff backoff;
    private final RelayMetrics metrics;
    private final Map<Long, String> toPoison = new LinkedHashMap<>();
    /** Failed rows to release with a backoff; kept (and still held) until the release commits. */
    private final List<PendingRow> toRelease = new ArrayList<>();
    private final List<PoisonedRow> poisonedToPublish = new ArrayList<>();
    private final PriorityQueue<Long> retryTimes = new PriorityQueue<>();

    RelayFailureHandler(OutboxClaimer claimer, OutboxSourceConnectorConfig config, Backoff backoff,
                        RelayMetrics metrics) {
        this.claimer = claimer;
        this.config = config;
        this.backoff = backoff;
        this.metrics = metrics;
    }

    /** Why this claimed row must not be produced, or null when it may be. */
    String rejectBeforeProducing(ClaimedRow row) {
        if (row.attempts() > config.maxAttempts()) {
            return claimedTooOften(row.attempts()) + "; the task failed or was stopped while delivering it each time"
                + (row.lastError() == null ? "" : "; last error: " + row.lastError());
        }
        if (row.headersType() != null && !"object".equals(row.headersType())) {
            return "headers must be a JSON object of header names to values, but is a JSON " + row.headersType()
                + "; fix the row's headers column, then SELECT events_requeue(" + row.seq() + ")";
        }
        String reserved = reservedHeader(row, config.recordShape().reservedHeaders());
        if (reserved != null) {
            return "headers sets '" + reserved + "', a header the relay itself writes on every record "
                + config.recordShape().reservedHeaders() + "; the writer's value would let consumers be misled about"
                + " the event, so the row is not sent. Rename that key in the row's headers column, then SELECT"
                + " events_requeue(" + row.seq() + ")";
        }
        int bytes = row.estimatedRecordBytes(config.recordShape());
        if (bytes > config.maxRecordBytes()) {
            return "record of about " + bytes + " bytes once converted (payload " + row.payloadBytes()
                + " bytes) exceeds outbox.max.record.bytes=" + config.maxRecordBytes()
                + "; shrink the payload, or raise outbox.max.record.bytes together with the producer's"
                + " max.request.size and the topic's max.message.bytes, then SELECT events_requeue("
                + row.seq() + ")";
        }
        return null;
    }

    private static String reservedHeader(ClaimedRow row, List<String> reserved) {
        if (row.headerKeys() != null) {
            for (String key : row.headerKeys()) {
                if (reserved.contains(key)) {
                    return key;
                }
            }
        }
        return null;
    }

    /**
     * A row a lost claim result left past the attempt limit: it is never read, so the check in
     * {@link #rejectBeforeProducing} never sees it. Poisoned by the next {@link #flushPoison}.
     */
    void poisonIfUnreadPastLimit(long seq, int attempts) {
        if (attempts > config.maxAttempts()) {
            toPoison.put(seq, claimedTooOften(attempts) + "; the result of its last claim was lost with the"
                + " database connection; SELECT events_requeue(" + seq + ") once the connection is sound");
        }
    }

    private String claimedTooOften(int attempts) {
        return "claimed " + attempts + " times without being fanned out (outbox.max.attempts=" + config.maxAttempts()
            + ")";
    }

    void poisonLater(ClaimedRow row, String reason) {
        toPoison.put(row.seq(), reason);
    }

    /** Poisons the rows collected by {@link #poisonLater} in one statement. */
    void flushPoison() throws SQLException {
        if (toPoison.isEmpty()) {
            return;
        }
        long[] seqs = toPoison.keySet().stream().mapToLong(Long::longValue).toArray();
        String[] reasons = toPoison.values().toArray(new String[0]);
        List<PoisonedRow> poisoned = claimer.poison(seqs, reasons);
        toPoison.clear();
        for (PoisonedRow p : poisoned) {
            log.error("Poisoned outbox row seq={} id={} type={} after {} attempts: {}. It is left out of every"
                + " claim; SELECT events_requeue({}) puts it back in line.", p.seq(), p.id(), p.type(),
                p.attempts(), p.reason(), p.seq());
        }
        metrics.poisoned(poisoned.size());
        poisonedToPublish.addAll(poisoned);
    }

    /** Records describing rows poisoned since the last call, when a poison topic is configured. */
    List<SourceRecord> drainPoisonRecords(String topic) {
        List<SourceRecord> out = new ArrayList<>();
        if (!topic.isEmpty()) {
            for (PoisonedRow p : poisonedToPublish) {
                Struct value = new Struct(POISON_SCHEMA)
                    .put("id", p.id()).put("seq", p.seq()).put("type", p.type()).put("subject", p.subject())
                    .put("attempts", p.attempts()).put("reason", p.reason())
                    .put("occurred_at", new Date(p.occurredAtMs())).put("poisoned_at", new Date(p.poisonedAtMs()))
                    .put("table", config.table());
                out.add(new SourceRecord(Map.of("outbox", config.table()), Map.of("seq", p.seq()), topic, null,
                    Schema.STRING_SCHEMA, p.subject(), POISON_SCHEMA, value, p.poisonedAtMs()));
            }
        }
        poisonedToPublish.clear();
        return out;
    }

    /**
     * Rows whose records failed: poisoned at the attempt limit, else released with a backoff. Rows of an
     * earlier call whose poisoning or release failed are written again first; until then they stay held
     * ({@link #heldSeqs}), so no lease recovery gives them back as if they had never been attempted.
     */
    void handleFailed(List<PendingRow> failed, long nowMs) throws SQLException {
        for (PendingRow row : failed) {
            if (row.row().attempts() >= config.maxAttempts()) {
                toPoison.put(row.seq(), row.failure() + " (attempt " + row.row().attempts() + " of "
                    + config.maxAttempts() + ")");
            } else {
                toRelease.add(row);
                log.warn("Outbox row seq={} id={} was not delivered (attempt {} of {}): {}; retrying it alone in {} ms",
                    row.seq(), row.row().id(), row.row().attempts(), config.maxAttempts(), row.failure(),
                    backoff.delayForAttempt(row.row().attempts()));
            }
        }
        flushPoison();
        if (toRelease.isEmpty()) {
            return;
        }
        long[] seqs = new long[toRelease.size()];
        int[] givebacks = new int[toRelease.size()];
        long[] delays = new long[toRelease.size()];
        String[] errors = new String[toRelease.size()];
        for (int i = 0; i < seqs.length; i++) {
            PendingRow row = toRelease.get(i);
            seqs[i] = row.seq();
            delays[i] = backoff.delayForAttempt(row.row().attempts());
            errors[i] = row.failure();
        }
        claimer.release(seqs, givebacks, delays, errors);
        for (long delay : delays) {
            retryTimes.add(nowMs + delay);
        }
        metrics.failed(seqs.length);
        toRelease.clear();
    }

    /** Whether rows wait to be poisoned or released because a write failed. */
    boolean hasPendingWrites() {
        return !toPoison.isEmpty() || !toRelease.isEmpty();
    }

    /** Rows this handler holds: waiting to be poisoned or released. */
    LongStream heldSeqs() {
        return LongStream.concat(toPoison.keySet().stream().mapToLong(Long::longValue),
            toRelease.stream().mapToLong(PendingRow::seq));
    }

    /** Whether {@code seq} waits to be poisoned. */
    boolean poisonPending(long seq) {
        return toPoison.containsKey(seq);
    }

    /** The earliest time a released row becomes claimable again, or Long.MAX_VALUE. */
    long nextRetryAt() {
        Long next = retryTimes.peek();
        return next == null ? Long.MAX_VALUE : next;
    }

    /** Forgets retry times that have passed. */
    void retryTimesPassed(long nowMs) {
        while (!retryTimes.isEmpty() && retryTimes.peek() <= nowMs) {
            retryTimes.poll();
        }
    }

    /**
     * Releases every row still in flight at stop, giving its attempt back unless its records are among
     * those of the last poll(), which Connect may not have sent: Connect also calls stop() after the task
     * failed on a record (a converter or transform error), and returning that attempt would let one row
     * crash-loop the task forever. Rows whose records were sent but not yet acknowledged (a slow broker
     * at a graceful stop) get their attempt back, so repeated stops do not push healthy rows towards
     * poisoning; the next owner delivers them again, so a consumer may see them twice.
     */
    void releaseOnStop(Collection<PendingRow> inFlight, Set<Long> maybeUnsent) throws SQLException {
        if (inFlight.isEmpty()) {
            return;
        }
        long[] seqs = new long[inFlight.size()];
        int[] givebacks = new int[inFlight.size()];
        int i = 0;
        int kept = 0;
        for (PendingRow row : inFlight) {
            seqs[i] = row.seq();
            boolean keep = row.handedOut() && maybeUnsent.contains(row.seq());
            kept += keep ? 1 : 0;
            givebacks[i++] = keep ? 0 : 1;
        }
        claimer.releaseNow(seqs, givebacks);
        log.info("Released the leases of {} rows still in flight at stop; they are claimed again at once ({} of"
            + " them, from the last batch Connect may not have sent, keep their attempt)", seqs.length, kept);
    }
}
