package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClaimSizerTest {
    @Test
    void fullClaimsDoubleTheNextUpToTheMaxAndShortOnesHalveItDownToTheFloor() {
        ClaimSizer sizer = new ClaimSizer(200, 1000);
        assertThat(sizer.next()).isEqualTo(200);
        sizer.claimed(true, false, true);
        assertThat(sizer.next()).isEqualTo(400);
        sizer.claimed(true, false, true);
        sizer.claimed(true, false, true);
        assertThat(sizer.next()).as("capped at the max").isEqualTo(1000);
        sizer.claimed(true, false, true);
        assertThat(sizer.next()).isEqualTo(1000);
        sizer.claimed(false, false, false);
        assertThat(sizer.next()).isEqualTo(500);
        sizer.claimed(false, false, false);
        sizer.claimed(false, false, false);
        assertThat(sizer.next()).as("never below the floor").isEqualTo(200);
    }

    @Test
    void aRetryMakesTheNextClaimOneRowAndAFreshRowFoundThenBringsBackTheFloor() {
        ClaimSizer sizer = new ClaimSizer(200, 1000);
        sizer.claimed(true, false, true);
        sizer.claimed(true, true, true); // a row attempted before was first in line: claimed alone
        assertThat(sizer.next()).isEqualTo(1);
        assertThat(sizer.batch()).as("rows in flight stay bounded by the floor at least").isEqualTo(200);
        sizer.claimed(true, true, true);
        assertThat(sizer.next()).as("the next one in line may be attempted too").isEqualTo(1);
        sizer.claimed(true, false, true); // a fresh row: the run of retries is over
        assertThat(sizer.next()).isEqualTo(200);
        sizer.claimed(true, true, true);
        sizer.claimed(true, true, false); // a retry that left nothing in line: the next claim waits for rows
        assertThat(sizer.next()).as("a quiet task's next claim is not a one-row claim").isEqualTo(200);
    }

    @Test
    void aMaxBelowTheFloorMeansFixedClaims() {
        ClaimSizer sizer = new ClaimSizer(200, 50);
        sizer.claimed(true, false, true);
        assertThat(sizer.next()).isEqualTo(200);
        assertThat(sizer.max()).isEqualTo(200);
    }
}
