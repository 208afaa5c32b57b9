package io.outboxrelay.postgres;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** A query's rows as strings, for what the benchmark and the quickstart print and record of a server. */
public final class Rows {
    private Rows() {
    }

    /** Every remaining row of {@code rs}, each column as {@link ResultSet#getString}. */
    public static List<List<String>> asStrings(ResultSet rs) throws SQLException {
        List<List<String>> rows = new ArrayList<>();
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            List<String> row = new ArrayList<>(n);
            for (int i = 1; i <= n; i++) {
                row.add(rs.getString(i));
            }
            rows.add(row);
        }
        return rows;
    }
}
