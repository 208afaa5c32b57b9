package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A configured table name always becomes one (or, with a schema, two) quoted identifiers, never SQL. */
class IdentifiersTest {

    @Test
    void aHostileNameBecomesOneQuotedIdentifier() {
        String quoted = Identifiers.quoteQualified("events\"; DROP TABLE x; --");

        assertThat(quoted).isEqualTo("\"events\"\"; DROP TABLE x; --\"");
        assertIsOneQuotedIdentifier(quoted);
    }

    @Test
    void aColumnNameIsOneQuotedIdentifierEvenWithADot() {
        assertThat(Identifiers.quote("occurred.at")).isEqualTo("\"occurred.at\"");
        String quoted = Identifiers.quote("x\" IS NULL; --");
        assertThat(quoted).isEqualTo("\"x\"\" IS NULL; --\"");
        assertIsOneQuotedIdentifier(quoted);
        assertThatThrownBy(() -> Identifiers.quote("a\0b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSchemaQualifiedNameBecomesTwoQuotedIdentifiers() {
        assertThat(Identifiers.quoteQualified("app.events")).isEqualTo("\"app\".\"events\"");
        assertThat(Identifiers.quoteQualified("events")).isEqualTo("\"events\"");
        assertThat(Identifiers.split("app.events")).containsExactly("app", "events");
        assertThat(Identifiers.split("events")).containsExactly("events");
    }

    @Test
    void aHostileSchemaAndTableAreEachQuoted() {
        String quoted = Identifiers.quoteQualified("app\"; DROP SCHEMA app CASCADE; --.ev\"ents");

        assertThat(quoted).isEqualTo("\"app\"\"; DROP SCHEMA app CASCADE; --\".\"ev\"\"ents\"");
        int dot = quoted.indexOf("\".\"");
        assertIsOneQuotedIdentifier(quoted.substring(0, dot + 1));
        assertIsOneQuotedIdentifier(quoted.substring(dot + 2));
    }

    @Test
    void onlyTheFirstDotSeparatesTheSchema() {
        // a second dot belongs to the table name, it cannot open a third name part
        assertThat(Identifiers.quoteQualified("app.events.v2")).isEqualTo("\"app\".\"events.v2\"");
    }

    @Test
    void caseAndSpacesAreKeptAsGiven() {
        // quoted identifiers are case sensitive: Events is not events, which validation reports
        assertThat(Identifiers.quoteQualified("App.Events")).isEqualTo("\"App\".\"Events\"");
        assertThat(Identifiers.quoteQualified("my events")).isEqualTo("\"my events\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", ".events", "app.", ".", "ev\u0000ents"})
    void emptyPartsAndNulAreRefused(String name) {
        assertThatThrownBy(() -> Identifiers.quoteQualified(name)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void nullIsRefused() {
        assertThatThrownBy(() -> Identifiers.quoteQualified(null)).isInstanceOf(IllegalArgumentException.class);
    }

    /** Starts and ends with a double quote, and every inner double quote is doubled. */
    private static void assertIsOneQuotedIdentifier(String s) {
        assertThat(s).startsWith("\"").endsWith("\"").hasSizeGreaterThan(2);
        String inner = s.substring(1, s.length() - 1);
        assertThat(inner.replace("\"\"", "")).doesNotContain("\"");
    }
}
