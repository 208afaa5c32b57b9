package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReportedFaultsTest {
    private static MentionOffsets.Named message(long seq) {
        return new MentionOffsets.Named(seq, "m" + seq);
    }

    @Test
    void aMessageIsReportedFirstOnceAndAgainOnlyAfterItWasForgotten() {
        ReportedFaults faults = new ReportedFaults(2);

        assertThat(faults.first(message(1))).isTrue();
        assertThat(faults.first(message(1))).as("the next pass: a repeat").isFalse();
        assertThat(faults.first(new MentionOffsets.Named(9, "m1"))).as("another message under the id").isTrue();
        assertThat(faults.first(message(2))).isTrue(); // m1 of seq 1 forgotten: the oldest of three
        assertThat(faults.first(message(2))).isFalse();
        assertThat(faults.first(message(1))).as("forgotten, reported again").isTrue();
    }
}
