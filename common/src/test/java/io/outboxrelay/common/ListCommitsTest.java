package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * When a task may take what is unacknowledged at a poll for filtered: only where Connect commits every list before
 * it polls again, and, without the task's own transactions, only once Connect showed it by acknowledging on the
 * poll thread.
 */
class ListCommitsTest {
    private static final RecordMetadata ACK = new RecordMetadata(new TopicPartition("t", 0), 0, 0, 0, 0, 0);

    private static ListCommits of(String support, String boundary) {
        Map<String, String> props = new HashMap<>();
        if (support != null) {
            props.put("exactly.once.support", support);
        }
        if (boundary != null) {
            props.put("transaction.boundary", boundary);
        }
        return ListCommits.of(null, props);
    }

    @ParameterizedTest(name = "exactly.once.support={0}, transaction.boundary={1}: {2}")
    @CsvSource(nullValues = "-", value = {
        "required, -, true", "required, poll, true", "' Required ', ' POLL ', true",
        "required, interval, false", "requested, -, false", "requested, poll, false", "-, -, false",
    })
    void onlyRequiredWithPollBoundariesOnceAnAcknowledgementCameOnThePollThread(String support, String boundary,
                                                                              boolean expected) {
        ListCommits commits = of(support, boundary);
        commits.polling();
        assertThat(commits.beforeNextPoll()).as("nothing shown yet").isFalse();

        commits.acknowledged(null); // a filtered record's null proves nothing
        assertThat(commits.beforeNextPoll()).isFalse();
        commits.acknowledged(ACK);
        assertThat(commits.beforeNextPoll()).isEqualTo(expected);
    }

    @Test
    void acknowledgementsFromTheProducersThreadShowNoTransaction() throws InterruptedException {
        ListCommits commits = of("required", "poll");
        commits.polling();
        Thread producer = new Thread(() -> commits.acknowledged(ACK));
        producer.start();
        producer.join();

        assertThat(commits.beforeNextPoll()).isFalse();
    }
}
