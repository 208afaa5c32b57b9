package io.outboxrelay.connector.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.connector.faults.DeliveryChecker.Delivered;
import io.outboxrelay.connector.faults.DeliveryChecker.Report;
import io.outboxrelay.connector.faults.DeliveryChecker.Reports;
import io.outboxrelay.connector.faults.DeliveryChecker.Stamp;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The checker every fault scenario relies on finds each kind of delivery fault on hand-made inputs. */
class DeliveryCheckerTest {
    private static Delivered at(String id, String key, long seq, int partition, long offset) {
        return new Delivered(id, key, seq, partition, offset);
    }

    @Test
    void aCompleteRunReportsNothing() {
        Report r = DeliveryChecker.check("t", List.of("a", "b", "c"),
            List.of(new Stamp("a", 0, 0), new Stamp("b", 0, 1), new Stamp("c", 1, 0)),
            List.of(at("a", "s1", 1, 0, 0), at("b", "s1", 2, 0, 1), at("c", "s2", 3, 1, 0)));

        assertThat(r.lost()).isEmpty();
        assertThat(r.duplicated()).isEmpty();
        assertThat(r.unexpected()).isEmpty();
        assertThat(r.stampedButMissing()).isEmpty();
        assertThat(r.orderViolations()).isEmpty();
        assertThat(r.clean()).isTrue();
        new Reports(List.of(r)).assertNothingLost().assertNoDuplicates().assertPerSubjectOrder();
    }

    @Test
    void aCommittedIdMissingFromTheTopicIsLostWithItsRowState() {
        Report r = DeliveryChecker.check("t", List.of("a", "b"), List.of(new Stamp("a", 0, 0)),
            List.of(at("a", "s1", 1, 0, 0)), Map.of("b", "POISONED, attempts 6"));

        assertThat(r.lost()).containsExactly("b");
        assertThat(r.clean()).isFalse();
        assertThat(r.toString()).contains("lost 1").contains("b (POISONED, attempts 6)");
        assertThatThrownBy(() -> new Reports(List.of(r)).assertNothingLost()).isInstanceOf(AssertionError.class)
            .hasMessageContaining("lost 1");
    }

    @Test
    void idsOnTheTopicMoreThanOnceAreCountedAsExtraCopies() {
        Report r = DeliveryChecker.check("t", List.of("a", "b"), List.of(),
            List.of(at("a", "s1", 1, 0, 0), at("a", "s1", 1, 0, 1), at("a", "s1", 1, 0, 2), at("b", "s1", 2, 0, 3)));

        assertThat(r.duplicated()).containsExactly(Map.entry("a", 3));
        assertThat(r.duplicates()).isEqualTo(2);
        assertThat(r.lost()).isEmpty();
        Reports reports = new Reports(List.of(r)).assertNothingLost().assertDuplicatesAtMost(2, "two");
        assertThatThrownBy(reports::assertNoDuplicates).isInstanceOf(AssertionError.class);
        assertThatThrownBy(() -> reports.assertDuplicatesAtMost(1, "one")).isInstanceOf(AssertionError.class)
            .hasMessageContaining("exceed the in-flight bound 1");
    }

    @Test
    void anIdOnTheTopicThatWasNeverCommittedIsUnexpected() {
        Report r = DeliveryChecker.check("t", List.of("a"), List.of(),
            List.of(at("a", "s1", 1, 0, 0), at("ghost", "s1", 9, 0, 1)));

        assertThat(r.unexpected()).containsExactly("ghost");
        assertThat(r.clean()).isFalse();
        assertThatThrownBy(() -> new Reports(List.of(r)).assertStampsBacked()).isInstanceOf(AssertionError.class);
    }

    @Test
    void aStampedRowTheTopicDoesNotHoldIsStampedButMissing() {
        Report r = DeliveryChecker.check("t", List.of("a", "b"), List.of(new Stamp("a", 0, 0), Stamp.of("b")),
            List.of(at("a", "s1", 1, 0, 0)));

        assertThat(r.stampedButMissing()).containsOnlyKeys("b");
        assertThat(r.lost()).containsExactly("b");
        assertThatThrownBy(() -> new Reports(List.of(r)).assertStampsBacked()).isInstanceOf(AssertionError.class)
            .hasMessageContaining("stamped-but-missing 1");
    }

    @Test
    void aStampNamingAnOffsetThatHoldsAnotherRecordIsStampedButMissing() {
        Report r = DeliveryChecker.check("t", List.of("a", "b"), List.of(new Stamp("a", 0, 1), new Stamp("b", 2, 7)),
            List.of(at("a", "s1", 1, 0, 0), at("b", "s1", 2, 0, 1)));

        assertThat(r.stampedButMissing()).containsOnlyKeys("a", "b");
        assertThat(r.stampedButMissing().get("a")).contains("0/1").contains("holds b");
        assertThat(r.stampedButMissing().get("b")).contains("holds nothing");
        assertThat(r.lost()).isEmpty();
    }

    @Test
    void whilePendingOnlyStampsMustBeBacked() {
        Report pending = DeliveryChecker.check("t", List.of("a", "b"), List.of(new Stamp("a", 0, 0)),
            List.of(at("a", "s1", 1, 0, 0)));

        new Reports(List.of(pending)).assertStampsBacked();
        assertThat(pending.lost()).containsExactly("b");
    }

    @Test
    void aSubjectsFirstDeliveriesOutOfSeqOrderAreOrderViolations() {
        Report r = DeliveryChecker.check("t", List.of("a", "b", "c"), List.of(),
            List.of(at("b", "s1", 2, 0, 0), at("a", "s1", 1, 0, 1), at("c", "s2", 3, 1, 0)));

        assertThat(r.orderViolations()).singleElement().asString().contains("key s1").contains("seq 1")
            .contains("after seq 2");
        assertThatThrownBy(() -> new Reports(List.of(r)).assertPerSubjectOrder()).isInstanceOf(AssertionError.class);
    }

    @Test
    void aRedeliveredOlderRecordAfterNewerOnesIsADuplicateNotAnOrderViolation() {
        Report r = DeliveryChecker.check("t", List.of("a", "b"), List.of(),
            List.of(at("a", "s1", 1, 0, 0), at("b", "s1", 2, 0, 1), at("a", "s1", 1, 0, 2)));

        assertThat(r.orderViolations()).isEmpty();
        assertThat(r.duplicates()).isEqualTo(1);
    }

    @Test
    void reportsSumOverTopics() {
        Report one = DeliveryChecker.check("one", List.of("a"), List.of(), List.of(at("a", "k", 1, 0, 0),
            at("a", "k", 1, 0, 1)));
        Report two = DeliveryChecker.check("two", List.of("a", "b"), List.of(Stamp.of("b")),
            List.of(at("a", "k", 1, 0, 0)));
        Reports reports = new Reports(List.of(one, two));

        assertThat(reports.duplicates()).isEqualTo(1);
        assertThat(reports.lost()).isEqualTo(1);
        assertThat(reports.stampedButMissing()).isEqualTo(1);
        assertThat(reports.toString()).contains("one:").contains("two:");
    }
}
