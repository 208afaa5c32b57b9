package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.connector.HeldRow.State;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rows a task holds as one map of typed states: each group written by one flush, kept when it fails. */
class HeldRowsTest {
    private static final Subscription HOOKS = new Subscription("webhooks", "hooks", List.of("*"), false);

    private final HeldRows held = new HeldRows(false, () -> { });

    @Test
    void aFailedWriteKeepsTheGroupHeldAndTheNextFlushWritesAndForgetsIt() throws SQLException {
        held.dispatched();
        held.handOut(pending(1));
        held.settleInFlightAsFiltered();
        held.settle(row -> { throw new AssertionError("no record failed"); });
        assertThat(held.has(State.ACKED)).isTrue();

        assertThatThrownBy(() -> held.flush(HeldRows.STAMPS, stamps -> {
            throw new SQLException("connection lost", "08006");
        })).isInstanceOf(SQLException.class);
        assertThat(held.has(State.ACKED)).as("still held after the failed write").isTrue();
        assertThat(held.seqs()).containsExactly(1L);

        List<OutboxStore.Stamp> stamps = written(HeldRows.STAMPS);
        assertThat(stamps).singleElement().satisfies(s -> {
            assertThat(s.seq()).isEqualTo(1L);
            assertThat(s.fanout()).contains("\"webhooks\":" + FanOutAckTracker.FILTERED);
        });
        assertThat(held.seqs()).isEmpty();
        assertThat(written(HeldRows.STAMPS)).as("nothing left to write").isNull();
    }

    @Test
    void aFailedRowTakesTheStateItsRuleGivesAndLeavesTheWindow() throws SQLException {
        held.dispatched();
        PendingRow failed = pending(2);
        failed.fail(0, "rejected by the broker");
        held.handOut(failed);
        held.handOut(pending(3));
        assertThat(held.inFlightCount()).isEqualTo(2);

        held.settle(row -> HeldRow.toPoison(row.seq(), row.failure(), row.row().attempts()));

        assertThat(held.inFlightCount()).isEqualTo(1);
        assertThat(held.producedNotStamped()).containsExactly(3L);
        assertThat(held.seqs()).containsExactlyInAnyOrder(2L, 3L);
        assertThat(written(HeldRows.POISONS))
            .containsExactly(new OutboxStore.Poison(2, "rejected by the broker", 1));
        assertThat(held.seqs()).containsExactly(3L);
    }

    @Test
    void aLostClaimIsGivenBackWithItsAttemptAndARowMeantToPoisonStaysToPoison() throws SQLException {
        held.poison(4, "unreadable", 1);
        held.claimLost(List.of(claimed(4), claimed(5)));

        assertThat(held.seqs()).as("a lost claim's lease is not kept").containsExactly(4L);
        assertThat(written(HeldRows.LOST_CLAIMS)).containsExactly(OutboxStore.Release.now(5, true));
        assertThat(written(HeldRows.POISONS))
            .containsExactly(new OutboxStore.Poison(4, "unreadable", 1));
        assertThat(held.has(State.LOST_CLAIM) || held.has(State.TO_POISON)).isFalse();
    }

    @Test
    void atStopOnlyTheRowsOfTheLastPollKeepTheirAttempt() throws SQLException {
        held.dispatched();
        held.handOut(pending(6));
        held.dispatched();
        held.handOut(pending(7));

        List<OutboxStore.Release> released = held.flushInFlightAtStop(releases -> releases);

        assertThat(released).extracting(OutboxStore.Release::seq).containsExactly(6L, 7L);
        assertThat(released.get(0).returnAttempt()).isTrue();
        assertThat(released.get(1).returnAttempt()).isFalse();
        assertThat(released.get(1).error()).contains("last batch");
        assertThat(held.inFlightCount()).isZero();
        assertThat(held.hasRoom(1, 1)).isTrue();
    }

    @Test
    void anEarlierClaimOfARowClaimedAgainDecidesNothingAndLeavesNoBytesBehind() throws SQLException {
        held.dispatched();
        PendingRow earlier = pending(8);
        earlier.fail(0, "not acknowledged in time");
        held.handOut(earlier);
        PendingRow again = pending(8); // its lease lapsed while Connect did not poll: the task claimed it again
        held.handOut(again);

        held.settle(row -> HeldRow.toPoison(row.seq(), row.failure(), row.row().attempts()));
        assertThat(held.inFlightCount()).as("the earlier claim's failure does not settle the later").isEqualTo(1);
        assertThat(held.has(State.TO_POISON)).isFalse();

        held.settleInFlightAsFiltered();
        held.settle(row -> { throw new AssertionError("the later claim's records did not fail"); });
        assertThat(written(HeldRows.STAMPS)).extracting(OutboxStore.Stamp::seq).containsExactly(8L);
        assertThat(held.hasRoom(1, 1)).as("no bytes of either claim left counted in flight").isTrue();
    }

    /**
     * Found by review: a row still in flight that a new claim meant to poison (too many attempts by then) left its
     * bytes counted in flight for good.
     */
    @Test
    void aRowInFlightThatIsToBePoisonedNowLeavesNoBytesBehind() throws SQLException {
        held.dispatched();
        held.handOut(pending(9));
        held.poison(9, "claimed more than outbox.max.attempts times", 6);

        assertThat(held.inFlightCount()).isZero();
        assertThat(held.hasRoom(1, 1)).as("no bytes left counted in flight").isTrue();
        assertThat(written(HeldRows.POISONS)).extracting(OutboxStore.Poison::seq).containsExactly(9L);
    }

    /** Flushes {@code group} with a write that works, returning what it wrote (null: none). */
    private <T> List<T> written(HeldRows.Group<?, T> group) throws SQLException {
        return held.flush(group, rows -> rows);
    }

    private static ClaimedRow claimed(long seq) {
        return new ClaimedRow(seq, "id-" + seq, "t", "s", "{}", 1L, 1, null, 2, null, null, null, false);
    }

    private static PendingRow pending(long seq) {
        return new PendingRow(claimed(seq), new Subscription[] {HOOKS});
    }
}
