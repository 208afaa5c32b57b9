package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** When a task may take what is unacknowledged at a poll for filtered: only where Connect commits every list first. */
class ListCommitsTest {
    @ParameterizedTest(name = "exactly.once.support={0}, transaction.boundary={1}: {2}")
    @CsvSource(nullValues = "-", value = {
        "required, -, true", "required, poll, true", "' Required ', ' POLL ', true",
        "required, interval, false", "requested, -, false", "requested, poll, false", "-, -, false",
    })
    void onlyRequiredExactlyOnceWithPollBoundariesCommitsEveryListBeforeTheNextPoll(String support, String boundary,
                                                                                  boolean expected) {
        Map<String, String> props = new HashMap<>();
        if (support != null) {
            props.put("exactly.once.support", support);
        }
        if (boundary != null) {
            props.put("transaction.boundary", boundary);
        }
        assertThat(ListCommits.beforeNextPoll(null, props)).isEqualTo(expected);
    }
}
