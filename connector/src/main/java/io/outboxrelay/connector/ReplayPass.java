package io.outboxrelay.connector;

import io.outboxrelay.common.SqlStates;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongUnaryOperator;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replay to one subscription (docs/replay.md), one bounded step per relay pass, after the live claim: a task
 * serves one request at a time under its lease, and holds one chunk of it (at most {@code outbox.batch.size}
 * rows) in flight. A chunk's records go to the request's subscription only, each with {@code event.replay};
 * the request's progress moves past the chunk only once all of them were acknowledged, so a subject's events
 * reach the topic in seq order, and a failure, a crash or a lost lease sends the chunk again (at least once).
 * The original rows are only read. A replay failure never fails the pass: live delivery goes on.
 */
final class ReplayPass {
    private static final Logger log = LoggerFactory.getLogger(ReplayPass.class);
    /** How often a task whose role may not read the replay requests looks again. */
    static final long NO_PRIVILEGE_LOOK_MS = 300_000;

    /** What a relay task's replay is made of, from its configuration. */
    record Settings(String table, int chunkRows, long checkIntervalMs, long retryMs, long leaseMs,
                    boolean toleratesAllErrors) {
    }

    private final ReplayStore store;
    private final Map<String, Subscription> subscriptions = new LinkedHashMap<>();
    private final OutboxRecordFactory factory;
    private final Settings settings;
    private final Runnable wake;
    /** A request's progress as its committed source offset names it, -1 when none (or not to be trusted). */
    private final LongUnaryOperator committedProgress;
    private final Function<ClaimedRow, String> refusal;
    private ReplayStore.Request request;
    private ReplayChunk chunk;
    private long nextAt;
    private long renewAt;
    private boolean off;
    /** A look was refused for privilege: said at WARN once until a look succeeds, then at DEBUG. */
    private boolean warnedNoPrivilege;

    /** A pass that never reads source offsets back, and skips only rows it could not read (tests). */
    ReplayPass(ReplayStore store, List<Subscription> subscriptions, OutboxRecordFactory factory, Settings settings,
               Runnable wake) {
        this(store, subscriptions, factory, settings, wake, id -> -1, ClaimedRow::unreadable);
    }

    /**
     * @param wake              called on the producer's thread once a chunk's last record is acknowledged
     * @param committedProgress a request's progress as its committed source offset names it, -1 when none
     * @param refusal           why a row must not be produced (the live rows' rules), or null: a row fanned out under
     *                          another value.format or before a rule existed may be one this connector cannot send
     */
    ReplayPass(ReplayStore store, List<Subscription> subscriptions, OutboxRecordFactory factory, Settings settings,
               Runnable wake, LongUnaryOperator committedProgress, Function<ClaimedRow, String> refusal) {
        this.refusal = refusal;
        this.store = store;
        subscriptions.forEach(s -> this.subscriptions.put(s.name(), s));
        this.factory = factory;
        this.settings = settings;
        this.wake = wake;
        this.committedProgress = committedProgress;
        this.off = settings.checkIntervalMs() <= 0;
    }

    /**
     * The replay of a relay task of {@code connector}, its records shaped as the live ones. {@code offsets}: the
     * task's reader of committed source offsets, null when they are not to be trusted (under
     * errors.tolerance=all a tolerated failure is acknowledged, and its offset committed, like a delivery).
     */
    static ReplayPass of(OutboxSourceConnectorConfig connector, RejectionRules rules, ReplayStore store, Runnable wake,
                         OffsetStorageReader offsets) {
        OutboxRecordFactory factory = new OutboxRecordFactory(connector.subscriptions(), connector.table(),
            connector.recordShape(), Clock.systemUTC(), connector.timestampMaxAheadMs());
        return new ReplayPass(store, connector.subscriptions(), factory, new Settings(connector.table(),
            connector.batchSize(), connector.replayCheckInterval().toMillis(), connector.backoffInitial().toMillis(),
            connector.lease().toMillis(), connector.toleratesAllErrors()), wake, offsets == null ? id -> -1
                : id -> ReplayRecord.committedProgress(offsets.offset(ReplayRecord.partition(connector.table(), id))),
            rules::beforeProducing);
    }

    /** One step: finish the chunk in flight if it settled, then, when due, send the next chunk into {@code out}. */
    void run(List<SourceRecord> out, long now) {
        if (off) {
            return;
        }
        try {
            if (chunk != null && !finish(now)) {
                return;
            }
            if (now >= nextAt) {
                next(out, now);
            }
        } catch (SQLException e) {
            failed(e, now);
        }
    }

    /** Producer thread: one replay record was acknowledged. */
    void acknowledged(ReplayRecord record, RecordMetadata metadata) {
        // a null is a transform's filter under errors.tolerance=none, and may be a tolerated failure under all
        record.chunk.acknowledged(metadata != null || !settings.toleratesAllErrors());
    }

    /** With connector-defined transaction boundaries, at the next poll: what is still open was filtered. */
    void settleOpenAsFiltered() {
        if (chunk != null) {
            chunk.settleOpenAsFiltered();
        }
    }

    /** The chunk in flight now (null: none), to settle later with {@link #settleOpenAsFilteredIf}. */
    Object chunkInFlight() {
        return chunk;
    }

    /** The same, when the chunk in flight is still {@code earlier} ({@link io.outboxrelay.common.ListCommits}). */
    void settleOpenAsFilteredIf(Object earlier) {
        if (chunk != null && chunk == earlier) {
            chunk.settleOpenAsFiltered();
        }
    }

    /** At stop: the request goes back, so another task takes it at once; its chunk in flight is sent again. */
    void stop() {
        if (request == null) {
            return;
        }
        try {
            store.release(request.id());
        } catch (SQLException e) {
            log.warn("Could not give back replay request {} on stop ({}); another task takes it when its lease"
                + " expires in {} ms", request.id(), e.getMessage(), settings.leaseMs());
        }
    }

    /** Whether a chunk is in flight now (tests). */
    boolean inFlight() {
        return chunk != null;
    }

    /** Returns whether the step may go on: false while the chunk in flight is not settled. */
    private boolean finish(long now) throws SQLException {
        if (!chunk.settled()) {
            if (now >= renewAt) {
                renew(now);
            }
            return false;
        }
        ReplayChunk done = chunk;
        chunk = null;
        if (done.failure() != null) {
            log.warn("Replay request {}: {}", done.request.id(), done.failure());
            store.failed(done.request.id(), done.failure());
            nextAt = now + settings.retryMs();
            return true;
        }
        advance(done.request, done.walkedTo, done.records, done.last);
        return true;
    }

    private void next(List<SourceRecord> out, long now) throws SQLException {
        long previous = request == null ? 0 : request.id();
        request = store.claim(previous);
        warnedNoPrivilege = false; // the role may read the requests (again): a later refusal is news, said at WARN
        if (request == null && previous != 0) {
            log.info("Replay request {} stopped: cancelled ({}_replay_cancel), or taken over by another task",
                previous, settings.table());
            request = store.claim(0);
        }
        if (request == null) {
            nextAt = now + settings.checkIntervalMs();
            return;
        }
        renewAt = now + settings.leaseMs() / 2;
        if (request.id() != previous) {
            request = reconciled(request);
            log.info("Replay request {} to subscription {}: occurred_at {}, from seq {} through {}, {} records sent"
                + " before", request.id(), request.subscription(), request.range(), request.progressSeq() + 1,
                request.throughSeq(), request.sent());
        }
        Subscription sub = subscriptions.get(request.subscription());
        List<ClaimedRow> rows = store.chunk(request, settings.chunkRows());
        boolean last = rows.size() < settings.chunkRows();
        long walkedTo = last ? request.throughSeq() : rows.get(rows.size() - 1).seq();
        List<PendingRow> batch = new ArrayList<>(rows.size());
        for (ClaimedRow row : rows) {
            String refused = refusal.apply(row);
            if (refused != null) {
                log.warn("Replay request {} skips row seq={} id={}: {}", request.id(), row.seq(), row.id(), refused);
            } else if (sub.matches(row.type())) {
                batch.add(new PendingRow(row, new Subscription[] {sub}));
            }
        }
        if (batch.isEmpty()) {
            advance(request, walkedTo, 0, last); // nothing to wait for: the walk moves on at once
            return;
        }
        List<SourceRecord> made = new ArrayList<>(batch.size());
        factory.records(batch, made, RecordOffsets.seqIn(ReplayRecord.partition(settings.table(), request.id())));
        chunk = new ReplayChunk(request, walkedTo, last, made.size(), wake);
        out.addAll(ReplayRecord.of(made, chunk));
    }

    /**
     * A request this task takes (over): when a committed source offset of its partition names more progress than
     * the table (its records committed, the task that sent them gone before it wrote the progress), the progress
     * moves there first, so those records are not sent again.
     */
    private ReplayStore.Request reconciled(ReplayStore.Request taken) throws SQLException {
        long committed;
        try {
            committed = committedProgress.applyAsLong(taken.id());
        } catch (RuntimeException e) {
            log.warn("Replay request {}: could not read its committed source offset ({}); it goes on from the table's"
                + " progress, seq {}, so records the last task sent may be sent again", taken.id(), e.getMessage(),
                taken.progressSeq());
            return taken;
        }
        if (committed <= taken.progressSeq()) {
            return taken;
        }
        long to = Math.min(committed, taken.throughSeq());
        if (!store.progress(taken.id(), to, 0, false)) {
            return taken; // cancelled meanwhile: the chunk read finds nothing and the request is dropped
        }
        log.info("Replay request {}: its committed source offset names progress to seq {}, past the table's {}; it"
            + " goes on from there", taken.id(), to, taken.progressSeq());
        return new ReplayStore.Request(taken.id(), taken.subscription(), taken.throughSeq(), to, taken.sent(),
            taken.range());
    }

    private void advance(ReplayStore.Request served, long walkedTo, int sent, boolean last) throws SQLException {
        if (!store.progress(served.id(), walkedTo, sent, last)) {
            log.info("Replay request {} stopped after seq {}: cancelled ({}_replay_cancel), or taken over by another"
                + " task", served.id(), served.progressSeq(), settings.table());
            request = null;
        } else if (last) {
            log.info("Replay request {} to subscription {} done: {} records sent", served.id(), served.subscription(),
                served.sent() + sent);
            request = null;
        }
    }

    private void renew(long now) throws SQLException {
        renewAt = now + settings.leaseMs() / 2;
        if (store.claim(request.id()) == null) {
            log.info("Replay request {} was cancelled, or taken over by another task, while a chunk was in flight;"
                + " its records go out, its progress is not written", request.id());
        }
    }

    private void failed(SQLException e, long now) {
        if (SqlStates.is(e, SqlStates.UNDEFINED_TABLE)) {
            off = true;
            log.info("Replay is off for this task: table {}_replays is missing (migration V6,"
                + " schemas/migrations/flyway/V6__outbox_replay.sql; re-running schemas/sql/outbox.sql applies it)",
                settings.table());
            return;
        }
        chunk = null; // its records are sent again from the request's progress
        if (SqlStates.is(e, SqlStates.INSUFFICIENT_PRIVILEGE)) {
            // a role with the table's grants alone (the contract's least privilege): each look is an ERROR in the
            // server's log, so looked at again rarely, and said once
            long wait = Math.max(settings.checkIntervalMs(), NO_PRIVILEGE_LOOK_MS);
            nextAt = now + wait;
            String text = "Replay is not possible for this task's role (" + e.getMessage() + "): it needs SELECT, UPDATE"
                + " on " + settings.table() + "_replays (migration V6 grants them to outbox_relay); looked at again"
                + " every " + wait + " ms, live delivery is not affected";
            if (warnedNoPrivilege) {
                log.debug("{}", text);
            } else {
                warnedNoPrivilege = true;
                log.warn("{}", text);
            }
            return;
        }
        nextAt = now + Math.max(settings.retryMs(), 1);
        log.warn("Replay request {} could not go on ({}, SQLState {}); retried in {} ms, live delivery is not affected",
            request == null ? "(none yet)" : request.id(), e.getMessage(), e.getSQLState(), settings.retryMs());
    }
}
