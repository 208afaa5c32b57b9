package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.List;

/**
 * The replay requests of an outbox table ({@code <table>_replays}, migration V6; docs/replay.md), one method per
 * edge a relay task moves: claim (or renew) a request's lease, read its next chunk, record progress, record a
 * failure, give it back. The PostgreSQL implementation is {@link JdbcReplayStore}; {@link #NONE} stands in where a
 * backend has none.
 */
interface ReplayStore {
    /** No requests, ever: a backend without replay. */
    ReplayStore NONE = new ReplayStore() {
        @Override
        public Request claim(long id) {
            return null;
        }

        @Override
        public List<ClaimedRow> chunk(Request request, int limit) {
            return List.of();
        }

        @Override
        public boolean progress(long id, long progressSeq, long sent, boolean done) {
            return false;
        }

        @Override
        public void failed(long id, String error) {
        }

        @Override
        public void release(long id) {
        }
    };

    /**
     * Leases an open request of one of this connector's subscriptions whose lease is free (or already this
     * incarnation's), the oldest first; with {@code id > 0} only that one, which renews its lease. Null when there
     * is none (for {@code id > 0}: it was cancelled, finished or taken over).
     */
    Request claim(long id) throws SQLException;

    /**
     * The next rows of {@code request} after its progress, at most {@code limit}, in seq order: rows fanned out,
     * with occurred_at in its range, up to its {@code through_seq}. Empty when the walk is over, or when the
     * request is no longer this incarnation's to serve.
     */
    List<ClaimedRow> chunk(Request request, int limit) throws SQLException;

    /**
     * Every record up to {@code progressSeq} was acknowledged: records it, adds {@code sent}, renews the lease,
     * and with {@code done} closes the request. False when the request was cancelled or is not this
     * incarnation's any more (nothing written).
     */
    boolean progress(long id, long progressSeq, long sent, boolean done) throws SQLException;

    /** A chunk failed: its {@code last_error}, the lease kept (the task retries the chunk). */
    void failed(long id, String error) throws SQLException;

    /** Gives the lease back (a stop), so another task can take the request at once. */
    void release(long id) throws SQLException;

    /**
     * A leased request: the subscription it replays to, the walk's end, the progress so far, and its range as
     * text (for the log).
     */
    record Request(long id, String subscription, long throughSeq, long progressSeq, long sent, String range) {
    }
}
