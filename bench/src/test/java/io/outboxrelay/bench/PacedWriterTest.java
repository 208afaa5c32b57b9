package io.outboxrelay.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class PacedWriterTest {
    private static final long S = 1_000_000_000L;

    @Test
    void writersOnPaceAchieveTheRateOfTheWindow() {
        // 10/s for 2 s: commit i at i/10 s
        long[] commits = new long[20];
        for (int i = 0; i < commits.length; i++) {
            commits[i] = 1 + i * S / 10;
        }
        assertThat(PacedWriter.commitsPerSecond(commits, 1 + S, 1 + 2 * S)).isCloseTo(10, within(0.01));
    }

    @Test
    void laggingWritersGetTheWarmUpEventsTheyCommitInsideTheWindowCounted() {
        // due at 10/s, but the writers commit only 5/s: in the window [1 s, 3 s) they commit events 5..14,
        // of which 5..9 were due in the warm-up; counting only events due after it would say 2.5/s
        long[] commits = new long[20];
        for (int i = 0; i < 15; i++) {
            commits[i] = i * S / 5;
        }
        assertThat(PacedWriter.commitsPerSecond(commits, S, 3 * S)).isCloseTo(5, within(0.01));
    }

    @Test
    void eventsGivenUpAreNotCommits() {
        long[] commits = {S, 0, 0, 0};
        assertThat(PacedWriter.commitsPerSecond(commits, 0, 2 * S)).isCloseTo(0.5, within(0.01));
    }

    @Test
    void theWindowCountsCommitsFromItsStartUpToButNotIncludingItsEnd() {
        long[] commits = {S - 1, S, 2 * S - 1, 2 * S, 0};
        assertThat(PacedWriter.commitsBetween(commits, S, 2 * S)).isEqualTo(2);
    }
}
