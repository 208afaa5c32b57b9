package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * A stand-in for an unreadable text must equal no text read strictly: the mention task keys members by account id, and
 * an unreadable account's stand-in equal to a readable account's id would hide one behind the other. "?" would: a
 * WIN1252 text may hold "?" itself.
 */
class DatabaseTextTest {
    private static byte[] hexOf(String hex) {
        return hex.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void aStatementNamesHowItsTextsTravelWithTwoPlaceholders() {
        String sql = DatabaseText.expand("WITH x AS (SELECT {raw_encoding} AS raw) SELECT {sent(w.id)} AS id FROM w, x");

        assertThat(sql).doesNotContain("{").contains("'SQL_ASCII', ").contains("'WIN1252'")
            .contains("SELECT CASE WHEN x.raw IS NULL THEN w.id ELSE encode(convert_to(w.id, x.raw), 'hex') END AS id");
        assertThatThrownBy(() -> DatabaseText.expand("SELECT {sent(lower(w.id))}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("column reference");
    }

    @Test
    void aStandInOfAWin1252TextIsNoTextThatEncodingCanHold() throws CharacterCodingException {
        byte[] unmappable = hexOf("6181"); // "a" and 0x81, which WIN1252 maps to no character
        byte[] question = hexOf("613f"); // "a?"

        assertThatThrownBy(() -> DatabaseText.strict(unmappable, "WIN1252"))
            .isInstanceOf(CharacterCodingException.class);
        assertThat(DatabaseText.lenient(unmappable, "WIN1252")).as("the relay's: may be sent back")
            .isEqualTo(DatabaseText.strict(question, "WIN1252"));
        assertThat(DatabaseText.standIn(unmappable, "WIN1252")).isEqualTo("a\uFFFD")
            .isNotEqualTo(DatabaseText.strict(question, "WIN1252"));
        assertThat(DatabaseText.standIn(HexFormat.of().formatHex("ok".getBytes(StandardCharsets.US_ASCII))
            .getBytes(StandardCharsets.US_ASCII), "WIN1252")).isEqualTo("ok");
    }
}
