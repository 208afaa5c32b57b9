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
 * When a task may take what is unacknowledged at a poll for filtered: only with poll boundaries, errors.tolerance=none,
 * and once Connect showed it runs the task in transactions (a commit or an acknowledgement on the poll thread).
 */
class ListCommitsTest {
    private static final RecordMetadata ACK = new RecordMetadata(new TopicPartition("t", 0), 0, 0, 0, 0, 0);

    private static ListCommits of(String boundary, String tolerance) {
        Map<String, String> props = new HashMap<>(Map.of("exactly.once.support", "requested"));
        if (boundary != null) {
            props.put("transaction.boundary", boundary);
        }
        if (tolerance != null) {
            props.put("errors.tolerance", tolerance);
        }
        return ListCommits.of(null, props);
    }

    @ParameterizedTest(name = "transaction.boundary={0}, errors.tolerance={1}: {2}")
    @CsvSource(nullValues = "-", value = {
        "-, -, true", "poll, none, true", "' POLL ', -, true", "interval, -, false", "' Interval', -, false",
        "poll, all, false", "-, ' ALL ', false",
    })
    void aCommitOrAnAcknowledgementOnThePollThreadShowsTransactionsWithPollBoundariesOnly(String boundary,
                                                                                        String tolerance,
                                                                                        boolean expected) {
        ListCommits byCommit = of(boundary, tolerance);
        byCommit.polling();
        assertThat(byCommit.beforeNextPoll()).as("nothing shown yet").isFalse();
        byCommit.committed();
        assertThat(byCommit.beforeNextPoll()).isEqualTo(expected);

        ListCommits byAck = of(boundary, tolerance);
        byAck.polling();
        byAck.acknowledged(null); // a filtered record's null proves nothing
        assertThat(byAck.beforeNextPoll()).isFalse();
        byAck.acknowledged(ACK);
        assertThat(byAck.beforeNextPoll()).isEqualTo(expected);
    }

    @Test
    void commitsAndAcknowledgementsFromOtherThreadsShowNoTransaction() throws InterruptedException {
        ListCommits commits = of("poll", "none");
        commits.polling();
        Thread other = new Thread(() -> {
            commits.committed();
            commits.acknowledged(ACK);
        });
        other.start();
        other.join();

        assertThat(commits.beforeNextPoll()).isFalse();
    }
}
