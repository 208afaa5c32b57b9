package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The relay's claim and stamp, in a loop and without Kafka: the seam the benchmark's SQL ceiling
 * ({@code bench/}, {@code Ceilings.sql}) measures through, so it runs exactly the statements and bindings that
 * ship ({@link JdbcOutboxStore}, package-private) and needs no class of its own in this package. Not a way to
 * run the relay: nothing here is configured by a user, and it stamps rows whose records went nowhere.
 */
public final class ClaimAndStampLoop {
    private final JdbcOutboxStore store;

    /** A store of one relay task out of {@code taskCount}, on table {@code events}, receipts on. */
    public ClaimAndStampLoop(DataSource dataSource, String owner, int taskCount, int taskIndex) {
        this.store = new JdbcOutboxStore(dataSource, "events", "\"events\"", owner,
            Long.toHexString(System.nanoTime() & 0xffffffL), taskCount, taskIndex, 60_000L, "outbox_events_fanned",
            null);
    }

    /**
     * Claims {@code batch} rows at a time, each claim carrying the stamps of the rows the previous one
     * claimed (with a fanout like the relay's), as a relay task's passes do, until no row is left in line;
     * returns how many rows it stamped.
     */
    public long claimAndStampAll(int batch) throws SQLException {
        long total = 0;
        List<OutboxStore.Stamp> stamps = List.of();
        while (true) {
            OutboxStore.PassResult pass = store.pass(new OutboxStore.Pass(stamps, batch));
            total += pass.stamped();
            List<ClaimedRow> rows = pass.claim().rows();
            if (rows.isEmpty()) {
                return total;
            }
            List<OutboxStore.Stamp> next = new ArrayList<>(rows.size());
            for (int k = 0; k < rows.size(); k++) {
                ClaimedRow row = rows.get(k);
                next.add(new OutboxStore.Stamp(row.seq(), "{\"sub1\":{\"topic\":\"sub1\",\"partition\":" + (k % 3)
                    + ",\"offset\":" + (total + k) + "}}", row.id()));
            }
            stamps = next;
        }
    }
}
