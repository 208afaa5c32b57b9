package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Named statements: parsing, and the only splice they allow, the quoted table name. */
class NamedSqlTest {
    private static final String FILE = """
        -- File comment, before any statement.

        -- name: ClaimRows
        -- What it does. Params: limit.
        SELECT seq FROM {table}
         WHERE fanned_out_at IS NULL
         LIMIT ?;

        -- name: Stamp
        UPDATE {table} SET fanned_out_at = now() WHERE seq = ANY(?) AND fanned_out_at IS NULL;
        -- name: Notify
        SELECT pg_notify(?, ?);
        """;

    @Test
    void splitsStatementsByNameAndDropsCommentLines() {
        NamedSql sql = NamedSql.parse(FILE);

        assertThat(sql.get("ClaimRows"))
            .isEqualTo("SELECT seq FROM {table}\n WHERE fanned_out_at IS NULL\n LIMIT ?;");
        assertThat(sql.get("Stamp"))
            .isEqualTo("UPDATE {table} SET fanned_out_at = now() WHERE seq = ANY(?) AND fanned_out_at IS NULL;");
        assertThat(sql.get("Notify")).isEqualTo("SELECT pg_notify(?, ?);");
    }

    @Test
    void theTableIsSplicedOnlyAsTheQuotedIdentifier() {
        NamedSql sql = NamedSql.parse(FILE);
        String hostile = Identifiers.quoteQualified("events\"; DROP TABLE x; --");

        String stamp = sql.forTable("Stamp", hostile);

        assertThat(stamp).isEqualTo("UPDATE \"events\"\"; DROP TABLE x; --\" SET fanned_out_at = now()"
            + " WHERE seq = ANY(?) AND fanned_out_at IS NULL;");
    }

    @Test
    void aTableNamedLikeThePlaceholderIsNotExpandedTwice() {
        NamedSql sql = NamedSql.parse(FILE);

        assertThat(sql.forTable("Notify", "\"x\"")).isEqualTo("SELECT pg_notify(?, ?);");
        assertThat(sql.forTable("Stamp", Identifiers.quoteQualified("{table}")))
            .startsWith("UPDATE \"{table}\" SET");
    }

    @Test
    void anUnknownNameIsAnError() {
        assertThatThrownBy(() -> NamedSql.parse(FILE).get("Nope"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Nope");
    }

    @Test
    void aMissingResourceIsNamedInTheError() {
        assertThatThrownBy(() -> NamedSql.load(NamedSqlTest.class, "none.sql"))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("none.sql");
    }

    @Test
    void namedParametersBecomePositionalAndCastsAndLiteralsAreLeftAlone() {
        NamedSql.Bindable b = NamedSql.Bindable.of(
            "SELECT :n::int, ':not_a_param', x::text FROM t WHERE a = :owner AND b = :n AND c ~ '^[0-9a-f]+$'");
        assertThat(b.sql()).isEqualTo("SELECT ?::int, ':not_a_param', x::text FROM t WHERE a = ? AND b = ? AND c ~ '^[0-9a-f]+$'");
        assertThat(b.names()).containsExactly("n", "owner", "n");
    }

    @Test
    void aQuotedIdentifierHidesColonsAndApostrophesFromTheParameterScan() {
        // a configured column "it's:owner" must neither open a string literal nor become a parameter
        NamedSql.Bindable b = NamedSql.Bindable.of("SELECT \"it's:owner\", \"a\"\":b\" FROM t WHERE x = :owner AND y = ':no'");

        assertThat(b.sql()).isEqualTo("SELECT \"it's:owner\", \"a\"\":b\" FROM t WHERE x = ? AND y = ':no'");
        assertThat(b.names()).containsExactly("owner");
    }

    @Test
    void theCallersPlaceholdersAreExpandedBeforeParametersAreRead() {
        NamedSql sql = NamedSql.parse("-- name: Q\nSELECT {col.x} FROM {table} WHERE seq = :seq;\n");

        NamedSql.Bindable b = sql.bindable("Q", "\"events\"", text -> text.replace("{col.x}", "\":x\""));

        assertThat(b.sql()).isEqualTo("SELECT \":x\" FROM \"events\" WHERE seq = ?;");
        assertThat(b.names()).containsExactly("seq");
    }
}
