package io.outboxrelay.bench;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

/**
 * The steady phase's second application transaction: one event inserted and {@code rows} random rows of another
 * table ({@code bench_accounts}, {@link SteadyPhase#ACCOUNTS} rows) updated, in one statement and so one commit.
 * WAL decoding reads every change of the transaction, a claim reads only the outbox: this shows what that costs.
 * The ids are distinct and the UPDATE takes them through one {@code = ANY} so concurrent writers lock rows in the
 * index's order and cannot deadlock.
 */
final class AccountUpdates implements PacedWriter.Transaction {
    static final String CREATE = "CREATE TABLE bench_accounts (id int PRIMARY KEY, balance bigint NOT NULL,"
        + " updated_at timestamptz NOT NULL, note text NOT NULL);"
        + " INSERT INTO bench_accounts SELECT g, 0, now(), repeat(md5(g::text), 3)"
        + " FROM generate_series(1, " + SteadyPhase.ACCOUNTS + ") g";

    private static final String SQL = "WITH touched AS (UPDATE bench_accounts SET balance = balance + 1,"
        + " updated_at = now() WHERE id = ANY (?::int[])) " + BenchEvents.INSERT_ONE_SQL;

    private final int rows;

    AccountUpdates(int rows) {
        this.rows = rows;
    }

    @Override
    public String sql() {
        return SQL;
    }

    @Override
    public void bind(PreparedStatement ps, long id) throws SQLException {
        String ids = ThreadLocalRandom.current().ints(1, SteadyPhase.ACCOUNTS + 1).distinct().limit(rows).sorted()
            .mapToObj(Integer::toString).collect(Collectors.joining(",", "{", "}"));
        ps.setString(1, ids);
        ps.setLong(2, id);
    }
}
