package io.outboxrelay.connector;

import io.outboxrelay.common.NamedSql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * ClaimRows as a server-side prepared statement, for tests that read its plan: PREPARE with the relay's own text
 * (parameters numbered), EXECUTE or EXPLAIN EXECUTE with literal arguments, the relay's defaults unless
 * overridden.
 */
final class ClaimStatement {
    private static final NamedSql.Bindable CLAIM = JdbcOutboxStore.claimSql("\"events\"", OutboxColumns.DEFAULT, false);
    private static final NamedSql.Bindable STRICT_CLAIM = JdbcOutboxStore.claimSql("\"events\"", OutboxColumns.DEFAULT,
        true);
    private static final Map<String, String> DEFAULTS = Map.ofEntries(Map.entry("stamp_seqs", "'{}'"),
        Map.entry("stamp_fanouts", "'{}'"), Map.entry("channel", "''"), Map.entry("receipts", "'{}'"),
        Map.entry("takeover_until", "now()"), Map.entry("owner", "'plan-0#1'"), Map.entry("task", "'plan-0'"),
        Map.entry("share_low", "0"), Map.entry("share_high", "4294967295"), Map.entry("limit", "200"),
        Map.entry("lease_ms", "60000"), Map.entry("max_attempts", "5"), Map.entry("max_record_bytes", "1000000"),
        Map.entry("max_claim_bytes", "8000000"));

    private ClaimStatement() {
    }

    /** PREPAREs ClaimRows as {@code name} in the session of {@code st}, as a strict task runs it or not. */
    static void prepare(Statement st, String name, boolean strict) throws SQLException {
        prepare(st, name, strict ? STRICT_CLAIM : CLAIM, UnaryOperator.identity());
    }

    /** The default ClaimRows with {@code edit} applied to the statement's text first. */
    static void prepare(Statement st, String name, UnaryOperator<String> edit) throws SQLException {
        prepare(st, name, CLAIM, edit);
    }

    private static void prepare(Statement st, String name, NamedSql.Bindable claim, UnaryOperator<String> edit)
        throws SQLException {
        StringBuilder numbered = new StringBuilder();
        int n = 0;
        for (char ch : edit.apply(claim.sql()).toCharArray()) {
            if (ch == '?') {
                numbered.append('$').append(++n);
            } else {
                numbered.append(ch);
            }
        }
        st.execute("PREPARE " + name + " AS " + numbered.toString().replaceAll(";\\s*$", ""));
    }

    /** The arguments of an EXECUTE of the default claim: the defaults, with {@code overrides} (name to SQL literal). */
    static String args(Map<String, String> overrides) {
        return args(overrides, false);
    }

    /** The same for the claim as a strict task runs it or not (the strict one names :stamp_seqs once more). */
    static String args(Map<String, String> overrides, boolean strict) {
        Map<String, String> values = new HashMap<>(DEFAULTS);
        values.putAll(overrides);
        return String.join(", ", (strict ? STRICT_CLAIM : CLAIM).names().stream().map(values::get).toList());
    }

    /** The plan text of {@code EXPLAIN <options> EXECUTE name(args)}. */
    static String explain(Statement st, String options, String name, String args) throws SQLException {
        StringBuilder plan = new StringBuilder();
        try (ResultSet rs = st.executeQuery("EXPLAIN " + options + " EXECUTE " + name + "(" + args + ")")) {
            while (rs.next()) {
                plan.append(rs.getString(1)).append('\n');
            }
        }
        return plan.toString();
    }
}
