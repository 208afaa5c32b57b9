package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.common.NamedSql;
import java.util.List;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** outbox.column.*: defaults, what is refused, and how the columns reach the relay's statements. */
class OutboxColumnsTest {
    private static final NamedSql RELAY_SQL = NamedSql.load(JdbcOutboxStore.class, "outbox-relay.sql");
    private static final OutboxColumns DEBEZIUM =
        new OutboxColumns("id", "type", "aggregateid", "payload", "", "occurred_at");

    private static OutboxSourceConnectorConfig config(String... kv) {
        return TestConfigs.minimal(kv);
    }

    private static String claim(OutboxColumns columns) {
        return RELAY_SQL.bindable("ClaimRows", "\"outbox\"", columns::expand).sql();
    }

    @Test
    void anExistingConfigReadsTheColumnsOfOutboxSql() {
        assertThat(config().columns()).isEqualTo(OutboxColumns.DEFAULT);
        assertThat(claim(OutboxColumns.DEFAULT)).contains("hashtext(\"subject\"::text)")
            .contains("COALESCE(\"payload\"::text, 'null') AS payload", "\"headers\"::text AS headers",
                "e.\"occurred_at\" AS occurred_at");
    }

    @Test
    void debeziumsTableIsMappedWithTwoKeys() {
        OutboxColumns columns = config("outbox.column.subject", "aggregateid", "outbox.column.headers", "").columns();

        assertThat(columns).isEqualTo(DEBEZIUM);
        assertThat(columns.hasHeaders()).isFalse();
        assertThat(claim(columns)).contains("hashtext(\"aggregateid\"::text)", "e.\"aggregateid\" AS subject")
            .contains("NULL::jsonb::text AS headers").doesNotContain("e.NULL").doesNotContain("\"subject\"");
    }

    @Test
    void everyPlaceholderOfEveryStatementIsExpanded() {
        assertThat(RELAY_SQL.names()).contains("ClaimRows", "ReleaseLeases");
        for (String name : RELAY_SQL.names()) {
            for (OutboxColumns columns : List.of(OutboxColumns.DEFAULT, DEBEZIUM)) {
                assertThat(RELAY_SQL.bindable(name, "\"outbox\"", columns::expand).sql()).as(name)
                    .doesNotContain("{col.").doesNotContain("{table}");
            }
        }
    }

    @Test
    void aHostileColumnNameStaysOneQuotedIdentifierAndNoParameter() {
        OutboxColumns hostile = new OutboxColumns("id", "type", "x\" IS NULL OR :owner = '", "payload", "headers",
            "occurred_at");

        NamedSql.Bindable claim = RELAY_SQL.bindable("ClaimRows", "\"outbox\"", hostile::expand);

        assertThat(claim.sql()).contains("hashtext(\"x\"\" IS NULL OR :owner = '\"::text)");
        assertThat(claim.names()).as("the same parameters as with the default columns")
            .isEqualTo(RELAY_SQL.bindable("ClaimRows", "\"outbox\"", OutboxColumns.DEFAULT::expand).names());
    }

    @Test
    void anUnknownPlaceholderIsAnError() {
        assertThatThrownBy(() -> OutboxColumns.DEFAULT.expand("SELECT {col.aggregatetype} FROM t"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("aggregatetype");
    }

    @Test
    void onlyTheHeadersColumnMayBeLeftOut() {
        assertThatThrownBy(() -> config("outbox.column.subject", ""))
            .isInstanceOf(ConfigException.class).hasMessageContaining("outbox.column.subject");
        assertThatThrownBy(() -> new OutboxColumns("id", "type", "subject", "", "headers", "occurred_at"))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStateColumnOrANameOutOfShapeIsRefusedOnItsKey() {
        assertThatThrownBy(() -> config("outbox.column.id", "seq"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("outbox.column.id").hasMessageContaining("state");
        assertThatThrownBy(() -> config("outbox.column.type", "ty\0pe"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("NUL");
        assertThatThrownBy(() -> config("outbox.column.payload", "p".repeat(64)))
            .isInstanceOf(ConfigException.class).hasMessageContaining("63 bytes");
        assertThat(config("outbox.column.occurred_at", "Created At").columns().occurredAt()).isEqualTo("Created At");
    }
}
