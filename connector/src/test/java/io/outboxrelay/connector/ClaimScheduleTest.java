package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClaimScheduleTest {
    private static final long SWEEP = 60_000;
    private static final long POLL = 1_000;

    /** A listening schedule whose start-up claim is behind it. */
    private static ClaimSchedule settled(long now) {
        ClaimSchedule s = new ClaimSchedule(now, SWEEP, POLL, true);
        ClaimSchedule.Due first = s.due(now, true);
        assertThat(first).isNotNull(); // the start-up claim
        s.claimed(false);
        return s;
    }

    @Test
    void anIdleListeningTaskDoesNotClaimWithoutAReason() {
        ClaimSchedule s = settled(1_000);
        assertThat(s.due(1_100, true)).isNull();
        assertThat(s.due(30_000, true)).isNull();
    }

    @Test
    void aRequestIsUsedUpByTheClaimItCauses() {
        ClaimSchedule s = settled(1_000);
        s.request();
        ClaimSchedule.Due due = s.due(1_100, true);
        assertThat(due).isNotNull();
        s.claimed(false);
        assertThat(s.due(1_200, true)).isNull();
    }

    @Test
    void aRequestThatLandsWhileTheTaskIsFullWaitsForRoomInsteadOfBeingLost() {
        ClaimSchedule s = settled(1_000);
        s.request(); // the writer's last NOTIFY, while every in-flight slot is taken
        assertThat(s.due(1_100, false)).isNull();
        assertThat(s.due(1_200, false)).isNull();
        assertThat(s.due(1_300, true)).as("acknowledgements made room: the NOTIFY is still owed a claim").isNotNull();
    }

    @Test
    void aSweepThatFallsDueWhileTheTaskIsFullRunsWhenRoomIsMade() {
        ClaimSchedule s = settled(1_000);
        assertThat(s.due(1_000 + SWEEP, false)).isNull();
        ClaimSchedule.Due due = s.due(1_000 + SWEEP + 500, true);
        assertThat(due).isNotNull();
        assertThat(due.sweep()).isTrue();
    }

    @Test
    void aFullClaimClaimsAgainAtOnce() {
        ClaimSchedule s = settled(1_000);
        s.request();
        assertThat(s.due(1_100, true)).isNotNull();
        s.claimed(true);
        assertThat(s.due(1_101, true)).isNotNull();
    }

    @Test
    void aClaimFallsDueWhenAFailedRowIsClaimableAgainAndNotBefore() {
        ClaimSchedule s = settled(1_000);
        s.retryAt(5_000); // a row released with a 4 s backoff
        assertThat(s.idleWaitMs(4_900, true)).as("an idle task wakes for it").isEqualTo(100);
        assertThat(s.due(4_999, true)).isNull();
        assertThat(s.due(5_000, true)).isNotNull();
        s.claimed(false);
        assertThat(s.due(5_001, true)).as("used up by the claim it caused").isNull();
    }

    @Test
    void aClaimThatLeftRowsInLineClaimsAgainWithoutTheIdleWait() {
        ClaimSchedule s = settled(1_000);
        s.claimed(true); // and the pass returned no record: it poisoned what it claimed
        assertThat(s.idleWaitMs(1_001, true)).isEqualTo(1);
        assertThat(s.idleWaitMs(1_001, false)).as("without room: waits for an acknowledgement")
            .isEqualTo(ClaimSchedule.MAX_IDLE_WAIT_MS);
    }

    @Test
    void withoutListenAClaimFallsDueEveryPollInterval() {
        ClaimSchedule s = new ClaimSchedule(1_000, SWEEP, POLL, false);
        assertThat(s.due(1_000, true)).isNotNull();
        s.claimed(false);
        assertThat(s.due(1_999, true)).isNull();
        assertThat(s.due(2_000, true)).isNotNull();
    }

    @Test
    void withoutListenAnIdleTaskWakesWhenTheNextPollIsDue() {
        ClaimSchedule s = new ClaimSchedule(1_000, SWEEP, POLL, false);
        s.due(1_000, true);
        s.claimed(false);
        assertThat(s.idleWaitMs(1_990, true)).isEqualTo(10);
    }

    @Test
    void withListenOnlyTheSweepAndTheIdleCapBoundTheWait() {
        ClaimSchedule s = settled(1_000);
        assertThat(s.idleWaitMs(1_010, true)).isEqualTo(ClaimSchedule.MAX_IDLE_WAIT_MS);
        assertThat(s.idleWaitMs(1_000 + SWEEP - 20, true)).isEqualTo(20);
    }

    @Test
    void anOverdueSweepWaitsOneMillisecondButAFullTaskWaitsForAnAcknowledgement() {
        ClaimSchedule s = settled(1_000);
        assertThat(s.idleWaitMs(2_000 + SWEEP, true)).isEqualTo(1);
        assertThat(s.idleWaitMs(2_000 + SWEEP, false)).as("no busy loop while the sweep waits for room")
            .isEqualTo(ClaimSchedule.MAX_IDLE_WAIT_MS);
    }
}
