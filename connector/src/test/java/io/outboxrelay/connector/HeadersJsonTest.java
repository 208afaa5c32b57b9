package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeadersJsonTest {

    /**
     * PostgreSQL prints only valid JSON, also past Jackson's default limits (jsonb prints 1e1000 as 1,001 digits;
     * nesting past 1,000 levels; a key past 50,000 characters): such headers were poisoned as "not valid JSON".
     */
    @Test
    void validJsonPastJacksonsDefaultLimitsIsRead() {
        String digits = "1" + "0".repeat(1_000);
        String deep = "[".repeat(1_100) + "]".repeat(1_100);
        String key = "k".repeat(60_000);
        HeadersJson.Parsed p = HeadersJson.parse("{\"n\": " + digits + ", \"d\": " + deep + ", \"" + key + "\": \"v\"}");
        assertThat(p.type()).isEqualTo("object");
        assertThat(p.keys()).containsExactly("d", key, "n");
        assertThat(p.values()).containsExactly(deep, "v", digits);
    }

    @Test
    void splitsAnObjectIntoSortedEntriesWithStringValuesUnquoted() {
        HeadersJson.Parsed p = HeadersJson.parse("{\"trace\": \"abc\", \"a\": \"x y\"}");
        assertThat(p.type()).isEqualTo("object");
        assertThat(p.keys()).containsExactly("a", "trace");
        assertThat(p.values()).containsExactly("x y", "abc");
    }

    @Test
    void keepsNonStringValuesAsTheirJsonText() {
        HeadersJson.Parsed p = HeadersJson.parse(
            "{\"n\": 12.5, \"t\": true, \"z\": null, \"o\": {\"k\": \"v, }\", \"a\": [1, {\"b\": \"]\"}]}, \"l\": [1, 2]}");
        assertThat(p.keys()).containsExactly("l", "n", "o", "t", "z");
        assertThat(p.values()).containsExactly("[1, 2]", "12.5", "{\"k\": \"v, }\", \"a\": [1, {\"b\": \"]\"}]}", "true",
            "null");
    }

    @Test
    void unescapesKeysAndStringValues() {
        HeadersJson.Parsed p = HeadersJson.parse("{\"q\\\"k\": \"line\\nnext \\\\ \\u00e9\\ud83d\\ude00 \\/\"}");
        assertThat(p.keys()).containsExactly("q\"k");
        assertThat(p.values()).containsExactly("line\nnext \\ \u00e9\ud83d\ude00 /");
    }

    @Test
    void anEmptyObjectHasNoEntries() {
        HeadersJson.Parsed p = HeadersJson.parse("{}");
        assertThat(p.type()).isEqualTo("object");
        assertThat(p.keys()).isEmpty();
    }

    @Test
    void namesTheJsonTypeOfAnythingButAnObject() {
        assertThat(HeadersJson.parse(null)).isEqualTo(HeadersJson.Parsed.NONE);
        assertThat(HeadersJson.parse("[1]").type()).isEqualTo("array");
        assertThat(HeadersJson.parse("\"s\"").type()).isEqualTo("string");
        assertThat(HeadersJson.parse("42").type()).isEqualTo("number");
        assertThat(HeadersJson.parse("false").type()).isEqualTo("boolean");
        assertThat(HeadersJson.parse("null").type()).isEqualTo("null");
        assertThat(HeadersJson.parse("[1]").keys()).isNull();
    }

    @Test
    void brokenTextIsReportedAsNotJsonInsteadOfThrowing() {
        assertThat(HeadersJson.parse("{\"a\": \"unterminated").type()).isEqualTo("text that is not valid JSON");
        assertThat(HeadersJson.parse("{\"a\" 1}").type()).isEqualTo("text that is not valid JSON");
        assertThat(HeadersJson.parse("").type()).isEqualTo("text that is not valid JSON");
    }
}
