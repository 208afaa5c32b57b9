package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClaimSizerTest {
    @Test
    void fullClaimsDoubleTheNextUpToTheMaxAndShortOnesHalveItDownToTheFloor() {
        ClaimSizer sizer = new ClaimSizer(200, 1000);
        assertThat(sizer.next()).isEqualTo(200);
        sizer.claimed(200);
        assertThat(sizer.next()).isEqualTo(400);
        sizer.claimed(400);
        sizer.claimed(800);
        assertThat(sizer.next()).as("capped at the max").isEqualTo(1000);
        sizer.claimed(1000);
        assertThat(sizer.next()).isEqualTo(1000);
        sizer.claimed(37);
        assertThat(sizer.next()).isEqualTo(500);
        sizer.claimed(0);
        sizer.claimed(0);
        assertThat(sizer.next()).as("never below the floor").isEqualTo(200);
    }

    @Test
    void aMaxBelowTheFloorMeansFixedClaims() {
        ClaimSizer sizer = new ClaimSizer(200, 50);
        sizer.claimed(200);
        assertThat(sizer.next()).isEqualTo(200);
        assertThat(sizer.max()).isEqualTo(200);
    }
}
