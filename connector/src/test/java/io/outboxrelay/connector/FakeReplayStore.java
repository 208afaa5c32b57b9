package io.outboxrelay.connector;

import io.outboxrelay.common.Json;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * In-memory replay requests for unit tests of {@link ReplayPass}: the guards of replay.sql (an open request of a
 * served subscription, one lease, progress never backwards) over rows the test lists as fanned out. {@link
 * #failNext} makes the next statement fail with a SQLState.
 */
final class FakeReplayStore implements ReplayStore {
    /** One request row. */
    static final class Req {
        final long id;
        final String subscription;
        final long throughSeq;
        long progressSeq;
        long sent;
        boolean done;
        boolean cancelled;
        String leaseOwner;
        String lastError;

        Req(long id, String subscription, long progressSeq, long throughSeq) {
            this.id = id;
            this.subscription = subscription;
            this.progressSeq = progressSeq;
            this.throughSeq = throughSeq;
        }
    }

    final String owner;
    final List<String> served;
    final Map<Long, Req> requests = new LinkedHashMap<>();
    /** The fanned rows in the requests' ranges, in seq order. */
    final List<ClaimedRow> rows = new ArrayList<>();
    final List<String> calls = new ArrayList<>();
    private String failNext;

    FakeReplayStore(String owner, List<String> served) {
        this.owner = owner;
        this.served = served;
    }

    Req request(long id, String subscription, long progressSeq, long throughSeq) {
        Req r = new Req(id, subscription, progressSeq, throughSeq);
        requests.put(id, r);
        return r;
    }

    void row(long seq, String type, String subject) {
        row(seq, type, subject, "{}");
    }

    void row(long seq, String type, String subject, String payload) {
        rows.add(new ClaimedRow(seq, "id-" + seq, type, subject, payload, 1_000L * seq, 0, null,
            Json.utf8Length(payload), null, null, null, false));
    }

    /** Rows 1 to {@code count}, all of one type and subject. */
    void rows(int count, String type, String subject) {
        for (long seq = 1; seq <= count; seq++) {
            row(seq, type, subject);
        }
    }

    void failNext(String sqlState) {
        failNext = sqlState;
    }

    private void maybeFail(String call) throws SQLException {
        calls.add(call);
        if (failNext != null) {
            String state = failNext;
            failNext = null;
            throw new SQLException(call + " failed", state);
        }
    }

    @Override
    public Request claim(long id) throws SQLException {
        maybeFail("claim");
        for (Req r : requests.values()) {
            boolean open = !r.done && !r.cancelled && served.contains(r.subscription);
            if (open && (r.leaseOwner == null || r.leaseOwner.equals(owner)) && (id == 0 || r.id == id)) {
                r.leaseOwner = owner;
                return new Request(r.id, r.subscription, r.throughSeq, r.progressSeq, r.sent, "range");
            }
        }
        return null;
    }

    @Override
    public List<ClaimedRow> chunk(Request request, int limit) throws SQLException {
        maybeFail("chunk");
        Req r = requests.get(request.id());
        if (r.cancelled || !owner.equals(r.leaseOwner)) {
            return List.of();
        }
        return rows.stream().filter(row -> row.seq() > request.progressSeq() && row.seq() <= r.throughSeq)
            .limit(limit).toList();
    }

    @Override
    public boolean progress(long id, long progressSeq, long sent, boolean done) throws SQLException {
        maybeFail("progress");
        Req r = requests.get(id);
        if (r.done || r.cancelled || !owner.equals(r.leaseOwner) || r.progressSeq > progressSeq) {
            return false;
        }
        r.progressSeq = progressSeq;
        r.sent += sent;
        r.lastError = null;
        if (done) {
            r.done = true;
            r.leaseOwner = null;
        }
        return true;
    }

    @Override
    public void failed(long id, String error) throws SQLException {
        maybeFail("failed");
        requests.get(id).lastError = error;
    }

    @Override
    public void release(long id) throws SQLException {
        maybeFail("release");
        Req r = requests.get(id);
        if (owner.equals(r.leaseOwner)) {
            r.leaseOwner = null;
        }
    }
}
