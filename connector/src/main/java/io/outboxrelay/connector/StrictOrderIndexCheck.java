package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.common.config.Config;

/**
 * Validation of {@code outbox.ordering=strict}: its claim asks, for every row it may take, whether an earlier row
 * of the same subject is still pending, which is cheap only with a partial index on (hashtext(subject), seq) of the rows in
 * line (migration V7, {@code <table>_subject_pending_idx}; docs/ordering.md). Without it every claim reads the head
 * of the line once per row it looks at, so validation refuses strict order on such a table.
 */
final class StrictOrderIndexCheck {
    private StrictOrderIndexCheck() {
    }

    /**
     * Adds an error to {@code outbox.ordering} when the table has no valid partial index whose keys start with the
     * subject column and seq and whose predicate is the claim's.
     *
     * @param conjuncts reads an index predicate as its set of conjuncts, as the claim index check does
     */
    static void check(Connection c, Config result, String quotedTable, String subjectColumn, Set<String> claimPredicate,
                      Function<String, Set<String>> conjuncts) throws SQLException {
        boolean indexed = false;
        try (PreparedStatement ps = OutboxLiveValidator.prepare(c, "SubjectSeqIndexPredicates", quotedTable);
             ResultSet rs = ps.executeQuery()) {
            while (rs.next() && !indexed) {
                indexed = isSubjectHash(rs.getString(1), subjectColumn)
                    && claimPredicate.equals(conjuncts.apply(rs.getString(2)));
            }
        }
        if (!indexed) {
            OutboxLiveValidator.error(result, OutboxSourceConnectorConfig.ORDERING, "outbox.ordering=strict needs a"
                + " partial index on (hashtext(" + subjectColumn + "::text), seq) of the rows in line, which table " + quotedTable
                + " lacks: without it every claim reads the head of the line once per row it looks at. Apply migration"
                + " V7 (schemas/migrations/flyway/V7__outbox_subject_order.sql; re-running schemas/sql/outbox.sql"
                + " applies it), or on a large live table first: CREATE INDEX CONCURRENTLY ON " + quotedTable + " ("
                + "hashtext(" + Identifiers.quote(subjectColumn) + "::text), seq) WHERE fanned_out_at IS NULL AND"
                + " poisoned_at IS NULL; or set outbox.ordering=best-effort (docs/ordering.md)");
        }
    }

    /** Whether an index key, as pg_get_indexdef prints it, is hashtext of the subject column (as text). */
    static boolean isSubjectHash(String key, String subjectColumn) {
        String k = key.replace("\"", "").replace("(", "").replace(")", "").replace("::text", "").trim();
        return k.equals("hashtext" + subjectColumn);
    }
}
