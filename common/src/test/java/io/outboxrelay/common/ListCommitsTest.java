package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.common.ListCommits.Settle;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * When a task may take what is unacknowledged at a poll for filtered: what was in flight at the last poll, after a
 * commit() on the poll thread since (an exactly-once worker's transaction commit); never from another thread's
 * commit, never under errors.tolerance=all.
 */
class ListCommitsTest {
    private static ListCommits of(String tolerance) {
        return ListCommits.of(null, tolerance == null ? Map.of() : Map.of("errors.tolerance", tolerance), "4.3.1");
    }

    @ParameterizedTest(name = "errors.tolerance={0}: {1}")
    @CsvSource(nullValues = "-", value = {"-, true", "none, true", "' None ', true", "all, false", "' ALL ', false"})
    void aCommitOnThePollThreadSinceTheLastPollSettlesWhatThatPollFoundInFlight(String tolerance, boolean settles) {
        ListCommits commits = of(tolerance);
        assertThat(commits.atPoll()).as("nothing committed yet").isEqualTo(Settle.NONE);
        assertThat(commits.notesInFlight()).as("no exactly-once worker seen yet").isFalse();
        commits.committed();

        assertThat(commits.atPoll()).isEqualTo(settles ? Settle.IN_FLIGHT_AT_LAST_POLL : Settle.NONE);
        assertThat(commits.notesInFlight()).isEqualTo(settles);
        assertThat(commits.atPoll()).as("no commit since that poll: a list may be in flight").isEqualTo(Settle.NONE);
    }

    /** The threading is Connect's behaviour, read in 3.9.2 and 4.3.1: on another version nothing is settled. */
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(nullValues = "-", value = {"3.9.2, true", "4.3.1, true", "4.0.0, true", "4.3.1-SNAPSHOT, true",
        "3.8.1, false", "4.4.0, false", "5.0.0, false", "unknown, false", "-, false"})
    void commitsAreTrustedOnlyOnTheConnectVersionsReadForIt(String version, boolean trusted) {
        ListCommits commits = ListCommits.of(null, Map.of(), version);
        commits.atPoll();
        commits.committed();
        assertThat(commits.atPoll()).isEqualTo(trusted ? Settle.IN_FLIGHT_AT_LAST_POLL : Settle.NONE);
        assertThat(ListCommits.runtimeRead(version)).isEqualTo(trusted);
    }

    /**
     * An exactly-once worker commits on the poll thread and polls again: with asynchronous commits the task says to
     * make them durable, once. An at-least-once worker's final commit on the poll thread (at a stop) is followed by
     * no poll: nothing is said (found by review: the first rule warned every default task at each stop).
     */
    @Test
    void aPollAfterACommitOnThePollThreadWithAsynchronousCommitsIsToldOfOnce() {
        ListCommits stopping = ListCommits.of(null, Map.of(), "4.3.1");
        stopping.atPoll();
        stopping.committed(); // an at-least-once worker's final commit
        assertThat(stopping.toldOfAsynchronousCommits()).isFalse();

        ListCommits transactions = ListCommits.of(null, Map.of(), "4.3.1");
        transactions.atPoll();
        transactions.committed();
        transactions.atPoll();
        assertThat(transactions.toldOfAsynchronousCommits()).isTrue();

        ListCommits durable = ListCommits.of(null, Map.of("exactly.once.support", "required"), "4.3.1");
        durable.atPoll();
        durable.committed();
        durable.atPoll();
        assertThat(durable.toldOfAsynchronousCommits()).as("unset, on: nothing to say").isFalse();
    }

    @Test
    void aCommitFromAnotherThreadShowsNothing() throws InterruptedException {
        ListCommits commits = of("none");
        commits.atPoll();
        Thread committer = new Thread(commits::committed);
        committer.start();
        committer.join();

        assertThat(commits.atPoll()).isEqualTo(Settle.NONE);
        assertThat(commits.notesInFlight()).isFalse();
    }
}
