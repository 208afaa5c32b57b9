package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SubjectShareTest {
    @Test
    void oneTaskOwnsEveryHash() {
        assertThat(SubjectShare.of(0, 1)).isEqualTo(new SubjectShare(0, SubjectShare.HASHES - 1));
    }

    @Test
    void theSharesCoverEveryHashOnceInOrderAndDifferBySizeByAtMostOne() {
        for (int count : new int[] {2, 3, 7, 64, 1000, Integer.MAX_VALUE}) {
            long next = 0;
            long smallest = Long.MAX_VALUE;
            long largest = 0;
            for (int i = 0; i < Math.min(count, 2_000); i++) {
                SubjectShare s = SubjectShare.of(i, count);
                assertThat(s.low()).as("task %d of %d starts where the last ended", i, count).isEqualTo(next);
                smallest = Math.min(smallest, s.high() - s.low() + 1);
                largest = Math.max(largest, s.high() - s.low() + 1);
                next = s.high() + 1;
            }
            if (count <= 2_000) {
                assertThat(next).as("%d tasks end at the last hash", count).isEqualTo(SubjectShare.HASHES);
            }
            assertThat(largest - smallest).as("sizes of %d shares", count).isLessThanOrEqualTo(1);
            assertThat(SubjectShare.of(count - 1, count).high()).isEqualTo(SubjectShare.HASHES - 1);
        }
    }

    /** Task i owns hash h exactly when floor(h * n / 2^32) = i, the rule the README states. */
    @Test
    void aHashBelongsToTheTaskItsProportionNames() {
        int count = 3;
        for (long h : new long[] {0, 1, 1_431_655_765L, 1_431_655_766L, 2_863_311_530L, 2_863_311_531L,
                                  SubjectShare.HASHES - 1}) {
            int owner = (int) (h * count / SubjectShare.HASHES);
            SubjectShare s = SubjectShare.of(owner, count);
            assertThat(h).as("hash %d, task %d of %d", h, owner, count).isBetween(s.low(), s.high());
        }
    }

    @Test
    void aTaskOutsideTheCountIsRefused() {
        assertThatThrownBy(() -> SubjectShare.of(2, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SubjectShare.of(-1, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SubjectShare.of(0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
