package io.outboxrelay.writer;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Reads fan-out stamps ({@code fanned_out_at}, {@code fanout}) of a set of events in one indexed query
 * per thousand ids. Both receipt paths go through it: a notification only says which rows to read, so
 * a receipt always reflects a committed stamp.
 */
final class ReceiptReader {
    static final int IDS_PER_QUERY = 1_000;

    /** One stamped row. */
    record Stamp(UUID id, Instant fannedOutAt, String fanout) {
    }

    private final String sql;

    ReceiptReader(String table) {
        this.sql = WriterSql.forTable("ReadReceipts", table);
    }

    /** The stamps of those {@code ids} whose rows are fanned out; unstamped or unknown ids are absent. */
    List<Stamp> read(Connection c, List<UUID> ids) throws SQLException {
        List<Stamp> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int from = 0; from < ids.size(); from += IDS_PER_QUERY) {
                List<UUID> chunk = ids.subList(from, Math.min(ids.size(), from + IDS_PER_QUERY));
                String[] text = new String[chunk.size()];
                for (int i = 0; i < text.length; i++) {
                    text[i] = chunk.get(i).toString();
                }
                ps.setArray(1, c.createArrayOf("text", text));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new Stamp(rs.getObject(1, UUID.class),
                            rs.getObject(2, OffsetDateTime.class).toInstant(), rs.getString(3)));
                    }
                }
            }
        }
        return out;
    }
}
