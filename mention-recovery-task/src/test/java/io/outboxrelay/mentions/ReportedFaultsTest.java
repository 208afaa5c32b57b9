package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReportedFaultsTest {
    private static MentionOffsets.Named message(long seq) {
        return new MentionOffsets.Named(seq, "m" + seq);
    }

    @Test
    void aMessageIsReportedFirstOnceAndPastTheCapacityNoneIs() {
        ReportedFaults faults = new ReportedFaults(2);

        assertThat(faults.first(message(1))).isTrue();
        assertThat(faults.first(message(1))).as("the next pass: a repeat").isFalse();
        assertThat(faults.first(new MentionOffsets.Named(9, "m1"))).as("another message under the id").isTrue();
        assertThat(faults.first(message(2))).as("full: no more at ERROR").isFalse();

        // every later pass visits the same messages in the same order: still no ERROR for any of them
        for (int pass = 0; pass < 3; pass++) {
            assertThat(faults.first(message(1))).isFalse();
            assertThat(faults.first(new MentionOffsets.Named(9, "m1"))).isFalse();
            assertThat(faults.first(message(2))).isFalse();
        }
    }
}
