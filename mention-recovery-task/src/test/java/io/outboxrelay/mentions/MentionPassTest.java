package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a pass sizes its reads and when it ends: a batch whose plan stopped short makes the next read as long as that
 * plan, a full read at that size goes on and doubles it up to the batch size, and only a read short of its own size
 * (with nothing cut) ends the pass.
 */
class MentionPassTest {
    private long nextSeq = 1;

    private List<UnroutedMessage> messages(int n) {
        List<UnroutedMessage> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long seq = nextSeq++;
            out.add(new UnroutedMessage("m" + seq, seq, "u", "ch", false, "[]"));
        }
        return out;
    }

    @Test
    void aCutShrinksTheNextReadWhichGrowsBackByDoublingAndOnlyAShortReadEndsThePass() {
        MentionPass pass = new MentionPass(ScanTrigger.Kind.START, 20, 0);
        assertThat(pass.limit()).isEqualTo(20);

        pass.batchRead(messages(2), 20); // planned 2 of the 20 read: cut
        assertThat(pass.hasMoreBatches()).isTrue();
        assertThat(pass.limit()).isEqualTo(2);
        assertThat(pass.floorSeq()).isEqualTo(2);

        pass.batchRead(messages(2), 2); // a full read at the smaller size: the pass goes on
        assertThat(pass.hasMoreBatches()).as("full at its own size, though short of the batch size").isTrue();
        assertThat(pass.limit()).isEqualTo(4);

        pass.batchRead(messages(4), 4);
        pass.batchRead(messages(8), 8);
        assertThat(pass.limit()).as("doubling stops at the batch size").isEqualTo(16);
        pass.batchRead(messages(16), 16);
        assertThat(pass.limit()).isEqualTo(20);

        pass.batchRead(messages(3), 3); // short of its own size, nothing cut: everything was seen
        assertThat(pass.hasMoreBatches()).isFalse();
        assertThat(pass.scanned()).isEqualTo(35);
    }

    @Test
    void aCutBatchOfOneKeepsTheFloorMovingAndABatchSizeOfOneNeverShrinks() {
        MentionPass pass = new MentionPass(ScanTrigger.Kind.START, 5, 0);
        pass.batchRead(messages(1), 5);
        assertThat(pass.limit()).isEqualTo(1);
        assertThat(pass.floorSeq()).isEqualTo(1);
        assertThat(pass.hasMoreBatches()).isTrue();

        MentionPass ofOne = new MentionPass(ScanTrigger.Kind.START, 1, 0);
        ofOne.batchRead(messages(1), 1);
        assertThat(ofOne.limit()).isEqualTo(1);
        assertThat(ofOne.hasMoreBatches()).isTrue();
        ofOne.batchRead(List.of(), 0);
        assertThat(ofOne.hasMoreBatches()).isFalse();
    }
}
