package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The strict JSON reader: value mapping, escapes, numbers, and refusal of malformed input. */
class JsonReaderTest {

    @Test
    void readsObjectsAsOrderedMapsAndArraysAsLists() {
        Object value = JsonReader.parse(
            " {\"b\": [1, \"two\", true, false, null], \"a\": {\"nested\": []}, \"c\": {}} ");

        assertThat(value).isInstanceOf(LinkedHashMap.class);
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) value;
        assertThat(map.keySet()).containsExactly("b", "a", "c");
        assertThat(map.get("b")).isEqualTo(Arrays.asList(1L, "two", true, false, null));
        assertThat(map.get("a")).isEqualTo(Map.of("nested", List.of()));
        assertThat(map.get("c")).isEqualTo(Map.of());
    }

    @Test
    void readsScalarsAtTheTopLevel() {
        assertThat(JsonReader.parse("\"x\"")).isEqualTo("x");
        assertThat(JsonReader.parse("42")).isEqualTo(42L);
        assertThat(JsonReader.parse("true")).isEqualTo(Boolean.TRUE);
        assertThat(JsonReader.parse(" null ")).isNull();
    }

    @Test
    void keepsTheLastValueOfARepeatedMemberNameAsJsonbDoes() {
        assertThat(JsonReader.parse("{\"k\":1,\"k\":2}")).isEqualTo(Map.of("k", 2L));
    }

    @Test
    void decodesEveryEscapeIncludingSurrogatePairs() {
        assertThat(JsonReader.parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00\""))
            .isEqualTo("q\" b\\ s/ \b\f\n\r\t é 😀");
    }

    @Test
    void keepsNonAsciiTextAsIs() {
        assertThat(JsonReader.parse("[\"héllo @adá 😀\"]")).isEqualTo(List.of("héllo @adá 😀"));
    }

    @Test
    void readsIntegersAsLongsWhileTheyFitAndEverythingElseAsBigDecimal() {
        assertThat(JsonReader.parse("-0")).isEqualTo(0L);
        assertThat(JsonReader.parse("9223372036854775807")).isEqualTo(Long.MAX_VALUE);
        assertThat(JsonReader.parse("-9223372036854775808")).isEqualTo(Long.MIN_VALUE);
        assertThat(JsonReader.parse("9223372036854775808")).isEqualTo(new BigDecimal("9223372036854775808"));
        assertThat(JsonReader.parse("1.50")).isEqualTo(new BigDecimal("1.50"));
        assertThat(JsonReader.parse("-2.5e-3")).isEqualTo(new BigDecimal("-2.5e-3"));
        assertThat(JsonReader.parse("1E2")).isEqualTo(new BigDecimal("1E2"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", "   ", "{", "[", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":1,}", "{a:1}", "{'a':1}", "{\"a\":1]",
        "01", "-", "1.", ".5", "+1", "1e", "1e+", "NaN", "Infinity", "tru", "nul", "True",
        "\"unterminated", "\"bad \\x escape\"", "\"\\u12\"", "\"\\u12g4\"", "\"tab\there\"",
        "[1] [2]", "{} x", "[\"a\"\u0000]"})
    void refusesMalformedInput(String json) {
        assertThatThrownBy(() -> JsonReader.parse(json))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("malformed JSON at position ");
    }

    @Test
    void namesThePositionOfTheFault() {
        assertThatThrownBy(() -> JsonReader.parse("[1, 2, x]"))
            .hasMessage("malformed JSON at position 7: unexpected character 'x', expected a value");
        assertThatThrownBy(() -> JsonReader.parse("{\"a\": 1 \"b\": 2}"))
            .hasMessage("malformed JSON at position 8: expected ',' or '}' but found '\"'");
    }

    @Test
    void doesNotRepeatTheInputInItsMessage() {
        assertThatThrownBy(() -> JsonReader.parse("{\"secret-token\": oops}"))
            .message().doesNotContain("secret-token");
    }

    @Test
    void refusesNullText() {
        assertThatThrownBy(() -> JsonReader.parse(null))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void refusesNestingDeeperThanTheLimitInsteadOfOverflowingTheStack() {
        char[] open = new char[JsonReader.MAX_DEPTH + 1];
        Arrays.fill(open, '[');
        String tooDeep = new String(open);

        assertThatThrownBy(() -> JsonReader.parse(tooDeep))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("nesting deeper than");
    }

    @Test
    void acceptsNestingUpToTheLimit() {
        String deepest = "[".repeat(JsonReader.MAX_DEPTH) + "]".repeat(JsonReader.MAX_DEPTH);

        assertThat(JsonReader.parse(deepest)).isInstanceOf(List.class);
    }
}
