package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** PsqlScript does what psql does with the constructs the schema files use, and refuses the rest. */
class PsqlScriptTest {
    private static final String DEFAULTED = """
        \\if :{?table}
        \\else
        \\set table events
        \\endif
        SET outbox_relay.table = :'table';
        """;

    @Test
    void aVariableNotGivenTakesTheScriptsDefault() {
        assertThat(PsqlScript.render(DEFAULTED, Map.of())).contains("SET outbox_relay.table = 'events';")
            .doesNotContain("\\");
    }

    @Test
    void aGivenVariableWinsOverTheDefault() {
        assertThat(PsqlScript.render(DEFAULTED, Map.of("table", "app.events")))
            .contains("SET outbox_relay.table = 'app.events';").doesNotContain("'events'");
    }

    @Test
    void valuesAreQuotedAsPsqlQuotesThem() {
        String sql = "SELECT :'v', :\"v\";";
        assertThat(PsqlScript.render(sql, Map.of("v", "it's"))).isEqualTo("SELECT 'it''s', \"it's\";");
        assertThat(PsqlScript.render(sql, Map.of("v", "a\\b\"c"))).isEqualTo("SELECT E'a\\\\b\"c', \"a\\b\"\"c\";");
    }

    @Test
    void nothingIsInterpolatedInsideQuotesDollarQuotesOrComments() {
        String sql = """
            SELECT ':''v''', ":'v'" -- :'v'
            /* :'v' */ DO $x$ BEGIN PERFORM ':'v''; END; $x$;
            SELECT :'v';
            """;
        String out = PsqlScript.render(sql, Map.of("v", "X"));
        assertThat(out).containsOnlyOnce("'X'").contains("-- :'v'").contains("/* :'v' */")
            .contains("PERFORM ':'v''");
    }

    @Test
    void aBackslashLineInsideADollarQuoteIsNotAMetaCommand() {
        String sql = "DO $fn$\n\\set x y\n$fn$;";
        assertThat(PsqlScript.render(sql, Map.of())).isEqualTo(sql);
    }

    @Test
    void whatItDoesNotKnowIsRefusedNotPassedOn() {
        assertThatThrownBy(() -> PsqlScript.render("\\i other.sql", Map.of()))
            .hasMessageContaining("not supported");
        assertThatThrownBy(() -> PsqlScript.render("SELECT :'nope';", Map.of()))
            .hasMessageContaining("nope is not set");
        assertThatThrownBy(() -> PsqlScript.render("\\if :{?a}\nSELECT 1;", Map.of()))
            .hasMessageContaining("without \\endif");
    }
}
