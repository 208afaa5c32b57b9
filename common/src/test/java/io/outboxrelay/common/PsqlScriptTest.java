package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    @Test
    void aFileIncludesAFileBesideItWithTheSameVariables(@TempDir Path dir) throws IOException {
        Files.createDirectories(dir.resolve("sql"));
        Files.writeString(dir.resolve("sql/base.sql"), DEFAULTED + "SELECT :'extra';\n");
        Files.writeString(dir.resolve("sql/adopt.sql"), """
            \\if :{?extra}
            \\else
            \\set extra x
            \\endif
            SELECT 'before';
            \\ir base.sql
            SELECT :'table';
            """);

        // psql -v table=app.events -f sql/adopt.sql, from another folder: base.sql is found beside adopt.sql,
        // sees the variables of adopt.sql, and its own defaults reach back
        String sql = PsqlScript.render(dir.resolve("sql/adopt.sql"), Map.of("table", "app.events"));

        assertThat(sql).containsSubsequence("SELECT 'before';", "SET outbox_relay.table = 'app.events';",
            "SELECT 'x';", "SELECT 'app.events';").doesNotContain("\\");
    }

    @Test
    void anIncludeInABranchNotTakenIsNotRead(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("main.sql"), "\\if :{?skip}\n\\ir missing.sql\n\\endif\nSELECT 1;\n");

        assertThat(PsqlScript.render(dir.resolve("main.sql"), Map.of())).contains("SELECT 1;");
        assertThatThrownBy(() -> PsqlScript.render(dir.resolve("main.sql"), Map.of("skip", "1")))
            .hasMessageContaining("missing.sql");
        assertThatThrownBy(() -> PsqlScript.render("\\ir other.sql", Map.of())).hasMessageContaining("not supported");
    }
}
