package io.outboxrelay.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.DatabaseText;
import io.outboxrelay.common.NamedSql;
import io.outboxrelay.connector.OutboxSourceConnector;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The kinds are told from statements as pg_stat_statements shows them, for the relay's SQL as it ships. */
class StatementKindsTest {
    private static final NamedSql SHIPPED = NamedSql.load(OutboxSourceConnector.class, "outbox-relay.sql");
    private static final Pattern PARAMETER_OR_CONSTANT = Pattern.compile("\\?|'(?:[^']|'')*'|\\b\\d+(\\.\\d+)?\\b");

    private final StatementKinds kinds = StatementKinds.shipped(PacedWriter.ONE_EVENT.sql());

    /** A named statement as the relay sends it, then as the server logs it: its parameters and constants $1, $2, ... */
    private static String logged(String name) {
        // as the relay sends it: the text placeholders expanded (JdbcOutboxStore), then the columns
        String sent = SHIPPED.bindable(name, "\"events\"",
            s -> DatabaseText.expand(s).replaceAll("\\{col\\.(\\w+)}", "\"$1\"")).sql();
        return numbered(sent);
    }

    private static String numbered(String sql) {
        Matcher m = PARAMETER_OR_CONSTANT.matcher(sql);
        StringBuilder out = new StringBuilder();
        int n = 0;
        while (m.find()) {
            m.appendReplacement(out, "\\$" + ++n);
        }
        return m.appendTail(out).toString();
    }

    @Test
    void theRelaysClaimIsKnownByItsNamedStatementWhateverElseItCalls() {
        assertThat(kinds.kind(logged("ClaimRows"), true)).isEqualTo(StatementKinds.CLAIM);
        assertThat(kinds.name(logged("ClaimRows"))).isEqualTo("ClaimRows");
        assertThat(kinds.kind(logged("ReleaseLeases"), true)).isEqualTo(StatementKinds.OTHER);
        assertThat(kinds.kind(logged("Backlog"), true)).isEqualTo(StatementKinds.OTHER);
    }

    @Test
    void theClaimIsKnownWithOrWithoutTheStrictOrderPlaceholderItsFileCarries() {
        // a best-effort task sends ClaimRows with its /*strict_order*/ comment left out (docs/ordering.md)
        assertThat(logged("ClaimRows")).contains("/*strict_order*/");
        assertThat(kinds.kind(logged("ClaimRows").replace("/*strict_order*/", ""), true)).isEqualTo(StatementKinds.CLAIM);
    }

    @Test
    void aStatementThatOnlyLooksLikeTheClaimIsNotTheClaim() {
        String claim = logged("ClaimRows");
        assertThat(kinds.kind(claim.replace("ORDER BY seq", "ORDER BY id"), true)).isNotEqualTo(StatementKinds.CLAIM);
        assertThat(kinds.name(claim.replace("SKIP LOCKED", "NOWAIT"))).isNull();
    }

    @Test
    void wakeUpStatementsInCodeAreKnownByTheFunctionsTheyCall() {
        assertThat(kinds.kind("SELECT u, setval($1::regclass, CASE WHEN u > $2 THEN $3 ELSE $4 END, $5) FROM"
            + " pg_notification_queue_usage() u", true)).isEqualTo(StatementKinds.WAKEUP);
        assertThat(kinds.kind("SELECT pg_sequence_last_value($1::regclass) = $2", true))
            .isEqualTo(StatementKinds.WAKEUP);
        assertThat(kinds.kind("LISTEN outbox_events", true)).isEqualTo(StatementKinds.WAKEUP);
        assertThat(kinds.kind("BEGIN", true)).isEqualTo(StatementKinds.OTHER);
    }

    @Test
    void theWritersOwnInsertAndStatementsRunInsideTriggersAreKeptApart() {
        assertThat(kinds.kind(numbered(PacedWriter.ONE_EVENT.sql()), true)).isEqualTo(StatementKinds.WRITERS);
        assertThat(kinds.kind("SELECT pg_notify($1, $2)", false)).isEqualTo(StatementKinds.NESTED);
        StatementKinds withUpdates = StatementKinds.shipped(new AccountUpdates(10).sql());
        assertThat(withUpdates.kind(numbered(new AccountUpdates(10).sql()), true)).isEqualTo(StatementKinds.WRITERS);
        assertThat(withUpdates.kind(numbered(PacedWriter.ONE_EVENT.sql()), true)).isEqualTo(StatementKinds.OTHER);
    }
}
