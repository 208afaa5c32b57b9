package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void utf8LengthCountsWhatTheEncoderWrites() {
        for (String s : new String[] {"", "{\"a\": 1}", "{\"name\": \"\u00e9\"}", "ascii then \u20ac and \ud83d\ude00",
            "\u00e9 first", "\ud83d\ude00\ud83d\ude00", "mixed \u07ff\u0800\uffff end"}) {
            assertThat(Json.utf8Length(s)).as(s).isEqualTo(s.getBytes(StandardCharsets.UTF_8).length);
        }
    }
}
