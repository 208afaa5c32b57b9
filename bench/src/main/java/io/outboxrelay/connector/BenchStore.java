package io.outboxrelay.connector;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The benchmark's way into the relay's own table access: the SQL ceiling claims and stamps through
 * {@link JdbcOutboxStore} itself (package-private, hence this class in the connector's package), so it
 * measures exactly the statements and bindings that ship.
 */
public final class BenchStore {
    private final JdbcOutboxStore store;

    /** A store of one relay task out of {@code taskCount}, on table {@code events}, receipts on. */
    public BenchStore(DataSource dataSource, String owner, int taskCount, int taskIndex) {
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
            OutboxStore.PassResult pass = store.pass(new OutboxStore.Pass(stamps, batch, List.of(), false));
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
