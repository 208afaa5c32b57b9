package io.outboxrelay.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The headers JSON: RFC 8259 escaping, and what jsonb cannot store refused with the header named. */
class JsonTextTest {
    @Test
    void escapesQuotesBackslashesAndEveryControlCharacter() {
        assertThat(JsonText.quote("a\"b\\c")).isEqualTo("\"a\\\"b\\\\c\"");
        assertThat(JsonText.quote("\n\r\t\b\f")).isEqualTo("\"\\n\\r\\t\\b\\f\"");
        assertThat(JsonText.quote("\u0001\u001f")).isEqualTo("\"\\u0001\\u001f\"");
        assertThat(JsonText.quote("/ \u007f é \uD83D\uDE80")).isEqualTo("\"/ \u007f é \uD83D\uDE80\"");
    }

    @Test
    void writesAnObjectInMapOrderAndNullForNoHeaders() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("traceparent", "00-1");
        m.put("k\"", "v");
        assertThat(JsonText.object(m)).isEqualTo("{\"traceparent\":\"00-1\",\"k\\\"\":\"v\"}");
        assertThat(JsonText.object(Map.of())).isNull();
        assertThat(JsonText.object(null)).isNull();
    }

    @Test
    void refusesWhatJsonbCannotStoreWithoutEchoingTheValue() {
        Map<String, String> nullValue = new HashMap<>();
        nullValue.put("h", null);
        assertThatThrownBy(() -> JsonText.object(nullValue)).hasMessageContaining("'h'");
        Map<String, String> nullKey = new HashMap<>();
        nullKey.put(null, "v");
        assertThatThrownBy(() -> JsonText.object(nullKey)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JsonText.object(Map.of("auth", "secret\u0000")))
            .hasMessageContaining("'auth'").hasMessageNotContaining("secret");
        assertThatThrownBy(() -> JsonText.object(Map.of("auth", "secret\uD83D")))
            .hasMessageContaining("unpaired").hasMessageNotContaining("secret");
    }
}
