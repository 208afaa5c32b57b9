package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.LogCapture;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * Every edge of the wake-up's state diagram (docs/wakeup.md), on the pacer alone: which claims it asks
 * for, when, and when it arms the flag. The flag's side is {@code WakeupFlagIT}; the relay on a real worker
 * {@code WakeupRaceIT}.
 */
class ClaimPacerTest {
    private static final long PACE = 10;
    /** outbox.linger.max.ms of the pacers that stretch their pace (the others: PACE, a fixed pace). */
    private static final long MAX_PACE = 25;
    private static final long SWEEP = 60_000;
    private static final long POLL = 1_000;

    private final FakeWakeupFlag flag = new FakeWakeupFlag();
    private final FakeListener ears = new FakeListener();
    private int listenerChecks;

    /** The LISTEN session: records what the pacer asks; a change is made when the test says so. */
    private final class FakeListener implements ClaimPacer.Listener {
        boolean on = true;
        boolean asked = true;
        int changes;

        @Override
        public void listen(boolean on) {
            asked = on;
            changes++;
        }

        @Override
        public boolean changing() {
            return asked != on;
        }

        @Override
        public void checkAlive() {
            listenerChecks++;
        }

        void done() {
            on = asked;
        }
    }
    private long now = 1_000;

    private ClaimPacer listening() {
        return listening(PACE);
    }

    private ClaimPacer listening(long maxPace) {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, maxPace, SWEEP, POLL);
        pacer.useFlag(flag, ears);
        return pacer;
    }

    /** Claims {@code rows} each time one is due, {@code claims} times; returns the wait before the next one. */
    private long paceAfter(ClaimPacer pacer, int claims, int rows) {
        long wait = pacer.waitMs(now, true);
        for (int i = 0; i < claims; i++) {
            now += wait;
            claim(pacer, rows);
            wait = pacer.waitMs(now, true);
            assertThat(pacer.next(now + wait - 1, true)).as("no claim before the pace it said").isNull();
        }
        return wait;
    }

    /** The claim due now, told that it found {@code rows}. */
    private ClaimPacer.Claim claim(ClaimPacer pacer, int rows) {
        ClaimPacer.Claim claim = pacer.next(now, true);
        assertThat(claim).as("a claim is due at %d", now).isNotNull();
        pacer.claimed(now, rows, false);
        return claim;
    }

    /**
     * An active pacer's empty claims over {@link ClaimCadence#IDLE_BEFORE_ARMING_MS}: what makes it arm (or be
     * quiet, without a flag).
     */
    private ClaimPacer twoEmptyClaims(ClaimPacer pacer) {
        claim(pacer, 0);
        now += ClaimCadence.IDLE_BEFORE_ARMING_MS;
        claim(pacer, 0);
        return pacer;
    }

    /** A claim that finds a row, then two empty claims over the idle time: what makes a busy task go quiet. */
    private ClaimPacer idleAfterRows(ClaimPacer pacer) {
        claim(pacer, 1);
        now += pacer.waitMs(now, true);
        return twoEmptyClaims(pacer);
    }

    /** From the start (ACTIVE) to QUIET: a row, the idle time, then the first look, which arms and claims at once. */
    private ClaimPacer quiet() {
        return quiet(listening());
    }

    private ClaimPacer quiet(ClaimPacer active) {
        ClaimPacer pacer = idleAfterRows(active);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        int armed = flag.arms;
        claim(pacer, 0);
        assertThat(flag.arms).as("the first look arms").isEqualTo(armed + 1);
        return pacer;
    }

    /** The looks of a quiet task until the gaps between them reach {@link ClaimPacer#LOOK_INTERVAL_MS}. */
    private void looksUntilTheLongestGap(ClaimPacer pacer) {
        for (long gap = pacer.waitMs(now, true); gap < ClaimPacer.LOOK_INTERVAL_MS; gap = pacer.waitMs(now, true)) {
            now += gap;
            claim(pacer, 0);
        }
    }

    @Test
    void anActiveTaskClaimsOncePerPaceWhileRowsArriveAndNeverArms() {
        ClaimPacer pacer = listening();
        for (int i = 0; i < 100; i++) {
            claim(pacer, 3);
            assertThat(pacer.next(now + PACE - 1, true)).as("not before the pace").isNull();
            assertThat(pacer.waitMs(now, true)).isEqualTo(PACE);
            now += PACE;
        }
        assertThat(flag.arms).isZero();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.ACTIVE);
    }

    @Test
    void claimsThatBringFewRowsAreSpacedOutUpToTheLongestPace() {
        assertThat(paceAfter(listening(MAX_PACE), 20, 3)).as("3 rows a claim: spaced out, at most MAX_PACE")
            .isEqualTo(MAX_PACE);
        assertThat(flag.arms).isZero();
        // the control: with outbox.linger.max.ms at outbox.linger.ms the same rows are claimed every PACE
        assertThat(paceAfter(listening(PACE), 20, 3)).isEqualTo(PACE);
    }

    @Test
    void atARateThatFillsAClaimInThePaceTheTaskClaimsEveryPace() {
        assertThat(paceAfter(listening(MAX_PACE), 20, ClaimCadence.ROWS_PER_CLAIM_AIMED)).isEqualTo(PACE);
        assertThat(paceAfter(listening(MAX_PACE), 20, 5 * ClaimCadence.ROWS_PER_CLAIM_AIMED)).isEqualTo(PACE);
    }

    @Test
    void betweenTheTwoThePaceIsWhatBringsTheAimedRows() {
        // 0.6 rows/ms: the aimed rows take ROWS_PER_CLAIM_AIMED / 0.6 ms, between PACE and MAX_PACE
        long aimedMs = Math.round(ClaimCadence.ROWS_PER_CLAIM_AIMED / 0.6);
        assertThat(aimedMs).as("the test's rate must fall between the two paces").isBetween(PACE + 2, MAX_PACE - 2);
        ClaimPacer pacer = listening(MAX_PACE);
        claim(pacer, 6);
        long wait = PACE;
        for (int i = 0; i < 40; i++) {
            now += wait;
            claim(pacer, (int) Math.round(0.6 * wait));
            wait = pacer.waitMs(now, true);
        }
        assertThat(wait).isBetween(aimedMs - 2, aimedMs + 2);
    }

    @Test
    void aRiseInTheRateShortensThePaceWithinAFewClaims() {
        ClaimPacer pacer = listening(MAX_PACE);
        assertThat(paceAfter(pacer, 20, 2)).isEqualTo(MAX_PACE);
        assertThat(paceAfter(pacer, 3, 4 * ClaimCadence.ROWS_PER_CLAIM_AIMED)).isEqualTo(PACE);
    }

    @Test
    void theFirstClaimOfAnActiveSpellWaitsTheShortestPace() {
        ClaimPacer pacer = quiet(listening(MAX_PACE));
        pacer.wake();
        claim(pacer, 1);
        assertThat(pacer.waitMs(now, true)).as("one row after a quiet spell tells nothing of the rate")
            .isEqualTo(PACE);
        now += PACE;
        claim(pacer, 1);
        assertThat(pacer.waitMs(now, true)).as("one row in a pace: spaced out").isEqualTo(MAX_PACE);
    }

    @Test
    void aClaimThatLeftRowsInLineClaimsAgainAtOnce() {
        ClaimPacer pacer = listening();
        ClaimPacer.Claim first = pacer.next(now, true);
        pacer.claimed(now, 200, true);
        assertThat(first).isNotNull();
        assertThat(pacer.next(now, true)).isNotNull();
    }

    @Test
    void aNotifyThatReachesAnActiveTaskCostsNothing() {
        ClaimPacer pacer = listening();
        claim(pacer, 3);
        assertThat(pacer.wake()).as("the task thread is not woken").isFalse();
        assertThat(pacer.next(now + 1, true)).as("and no claim comes early").isNull();
        assertThat(pacer.waitMs(now + 1, true)).isEqualTo(PACE - 1);
    }

    @Test
    void emptyClaimsGoQuietOnlyAfterTheIdleTimeAndTheFirstLookArmsAndClaimsAtOnce() {
        ClaimPacer pacer = listening();
        claim(pacer, 3);
        for (long idle = PACE; idle < ClaimCadence.IDLE_BEFORE_ARMING_MS; idle += PACE) {
            now += PACE;
            claim(pacer, 0);
            assertThat(pacer.state()).as("a gap of %d ms between rows is not idle yet", idle)
                .isEqualTo(ClaimPacer.State.ACTIVE);
        }
        now += PACE;
        claim(pacer, 0);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(flag.arms).isZero();
        assertThat(pacer.next(now, true)).as("the first look: at once").isNotNull();
        assertThat(flag.arms).as("armed before its claim").isOne();
    }

    /**
     * Without room (the in-flight window is full: a topic is down, say) nothing can be claimed, so a due sweep
     * must not make the wait zero: the task would spin through Connect's poll loop.
     */
    @Test
    void withoutRoomADueSweepDoesNotMakeTheTaskSpin() {
        ClaimPacer pacer = listening();
        claim(pacer, 3);
        now += SWEEP;
        assertThat(pacer.next(now, false)).isNull();
        assertThat(pacer.waitMs(now, false)).isEqualTo(ClaimPacer.MAX_WAIT_MS);
        assertThat(pacer.waitMs(now, true)).as("with room the sweep is due at once").isZero();
    }

    /**
     * A writer that read the flag down just before the arming sends no NOTIFY: the looks after the arming come a
     * pace apart and double up to LOOK_INTERVAL_MS, so its row is claimed about as soon as it commits; from then on
     * a quiet task looks every LOOK_INTERVAL_MS for as long as it is quiet, each look an arming and a claim. That one
     * rule also claims what a rolled-back clear, a lost NOTIFY, a dead LISTEN session or a backoff's end leaves.
     */
    @Test
    void aQuietTaskLooksAPaceAfterTheArmingThenEverDoublingUpToTheLookIntervalAndForever() {
        ClaimPacer pacer = quiet();
        List<Long> gaps = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            long gap = pacer.waitMs(now, true);
            assertThat(pacer.next(now + gap - 1, true)).as("no claim before the gap it said").isNull();
            gaps.add(gap);
            now += gap;
            claim(pacer, 0);
        }
        assertThat(gaps).containsExactly(PACE, 2 * PACE, 4 * PACE, 8 * PACE, 16 * PACE, ClaimPacer.LOOK_INTERVAL_MS,
            ClaimPacer.LOOK_INTERVAL_MS, ClaimPacer.LOOK_INTERVAL_MS, ClaimPacer.LOOK_INTERVAL_MS,
            ClaimPacer.LOOK_INTERVAL_MS, ClaimPacer.LOOK_INTERVAL_MS, ClaimPacer.LOOK_INTERVAL_MS);
        assertThat(flag.arms).as("every look arms: a clear rolled back since is undone").isEqualTo(1 + 12);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
    }

    /**
     * A NOTIFY wakes every quiet task of the table, for a row in one share. A task whose claims then find nothing
     * goes quiet again and looks LOOK_INTERVAL_MS later, not at once: arming at once would have the next writer of a
     * busy share NOTIFY again and wake it, over and over (a task whose share is empty beside one hot subject: 100+
     * claims and 30-50 NOTIFYs a second, found by review). No writer of its share was busy, so there is no race for a
     * first look to close. The control: a spell that found rows looks at once.
     */
    @Test
    void aTaskWokenForAnotherSharesRowLooksAtTheLookIntervalNotAtOnce() {
        ClaimPacer pacer = quiet();
        looksUntilTheLongestGap(pacer);
        now += 100;
        pacer.wake();
        claim(pacer, 0);
        now += pacer.waitMs(now, true);
        claim(pacer, 0);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        int armed = flag.arms;
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS - 1, true)).as("no look before the interval").isNull();
        assertThat(flag.arms).isEqualTo(armed);
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 0);
        assertThat(flag.arms).isEqualTo(armed + 1);

        now += 1;
        pacer.wake();
        claim(pacer, 1);
        while (pacer.state() == ClaimPacer.State.ACTIVE) {
            now += pacer.waitMs(now, true);
            claim(pacer, 0);
        }
        assertThat(pacer.next(now, true)).as("the control: rows found, the first look at once").isNotNull();
    }

    /**
     * A NOTIFY that arrives during the claim after which a busy task would go quiet is taken in the same spell: one
     * more claim, then quiet with the first look at once, as after any spell with rows. Taken in a new spell, which
     * finds nothing, it made the first look wait LOOK_INTERVAL_MS, and a writer that read the flag down just before
     * would have waited as long (found by review).
     */
    @Test
    void aNotifyDuringTheLastClaimOfABusySpellKeepsTheFirstLookAtOnce() {
        ClaimPacer pacer = listening();
        claim(pacer, 1);
        now += pacer.waitMs(now, true);
        claim(pacer, 0);
        now += ClaimCadence.IDLE_BEFORE_ARMING_MS;
        ClaimPacer.Claim last = pacer.next(now, true);
        assertThat(last).isNotNull();
        pacer.wake(); // the LISTEN thread, while that claim runs
        pacer.claimed(now, 0, false);
        assertThat(pacer.state()).as("one more claim first").isEqualTo(ClaimPacer.State.ACTIVE);
        assertThat(pacer.next(now, true)).as("a pace later, not back to back: a storm of NOTIFYs must not spin it")
            .isNull();
        now += PACE;
        claim(pacer, 0);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(pacer.next(now, true)).as("the first look at once").isNotNull();
        assertThat(flag.arms).isOne();
    }

    /**
     * A NOTIFY wakes every quiet task of the table, and all but one find nothing. Such a spell, and a task's first
     * at start, ends at its second empty claim, a pace after the first but never more than LOOK_INTERVAL_MS:
     * outbox.linger.ms may be up to 1,000 ms, and the flag is down, so a row of the task's own share committed
     * meanwhile sends no NOTIFY (found by review). At start the two claims need not span the idle time. The control:
     * a spell that found rows keeps its pace (its bound is outbox.linger.max.ms).
     */
    @Test
    void aSpellWithoutRowsEndsAtItsSecondEmptyClaimAtMostTheLookIntervalAfterTheFirst() {
        ClaimPacer started = listening();
        claim(started, 0);
        now += PACE;
        claim(started, 0);
        assertThat(started.state()).as("at start, a pace after the first claim").isEqualTo(ClaimPacer.State.QUIET);

        ClaimPacer pacer = new ClaimPacer(now, true, 1_000, 1_000, SWEEP, POLL);
        pacer.useFlag(flag, ears);
        claim(pacer, 0);
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS - 1, true)).isNull();
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 0);
        assertThat(pacer.state()).as("a long pace, capped").isEqualTo(ClaimPacer.State.QUIET);
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 0); // the first look
        assertThat(flag.arms).isOne();

        now += 100;
        pacer.wake();
        claim(pacer, 0);
        assertThat(pacer.state()).as("woken for another share's row").isEqualTo(ClaimPacer.State.ACTIVE);
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS - 1, true)).isNull();
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 0);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(flag.arms).as("the next look arms, not this claim").isOne();

        now += 100;
        pacer.wake();
        claim(pacer, 1);
        now += 1_000;
        claim(pacer, 0);
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS, true)).as("the control: a spell with rows").isNull();
    }

    /**
     * A NOTIFY that arrives while a spell without rows makes its last claim (another writer's clear, LISTEN back in
     * place) may be for a row of the task's own share: one more claim, a pace later but never more than
     * LOOK_INTERVAL_MS (the flag is down). Then quiet.
     */
    @Test
    void aNotifyDuringTheLastClaimOfASpellWithoutRowsBringsOneMoreWithinTheLookInterval() {
        ClaimPacer pacer = new ClaimPacer(now, true, 1_000, 1_000, SWEEP, POLL);
        pacer.useFlag(flag, ears);
        claim(pacer, 0);
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 0);
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 0); // a look: QUIET, armed

        now += 100;
        pacer.wake();
        claim(pacer, 0);
        notifyDuringTheSecondClaim(pacer, ClaimPacer.LOOK_INTERVAL_MS);
    }

    /**
     * A spell without rows whose first claim was just made: a NOTIFY comes during its second claim, {@code bound}
     * later, and brings one more claim, {@code bound} later again at most; then the task is quiet.
     */
    private void notifyDuringTheSecondClaim(ClaimPacer pacer, long bound) {
        now += bound;
        assertThat(pacer.next(now, true)).isNotNull();
        pacer.wake(); // the LISTEN thread, while that claim runs
        pacer.claimed(now, 0, false);
        assertThat(pacer.state()).as("one more claim first").isEqualTo(ClaimPacer.State.ACTIVE);
        lastClaimAfter(pacer, bound);
    }

    /** The last claim of a spell without rows: {@code gap} later and not sooner; then the task is quiet. */
    private void lastClaimAfter(ClaimPacer pacer, long gap) {
        assertThat(pacer.next(now + gap - 1, true)).as("not before %d ms", gap).isNull();
        now += gap;
        claim(pacer, 0);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
    }

    /**
     * While a task polls (LISTEN off here), its share's rows wait at most outbox.poll.interval.ms for a quiet task's
     * next claim: a spell without rows, at start, must not space its two claims wider when outbox.linger.ms is longer
     * than the poll interval (found by review). The control: with LISTEN on, the pace (under the look interval).
     */
    @Test
    void aPollingSpellWithoutRowsSpacesItsClaimsNoWiderThanThePollInterval() {
        long poll = 50;
        ClaimPacer polling = new ClaimPacer(now, false, 200, 200, SWEEP, poll);
        twoClaimsWithoutRows(polling, poll);
        now += poll;
        claim(polling, 0); // the first poll of the quiet task: as far apart

        ClaimPacer listening = new ClaimPacer(now, true, 200, 200, SWEEP, poll);
        listening.useFlag(flag, ears);
        twoClaimsWithoutRows(listening, 200); // the control: a pace, under the look interval
    }

    /** A spell without rows: a claim now, the second {@code gap} later and not sooner; then the task is quiet. */
    private void twoClaimsWithoutRows(ClaimPacer pacer, long gap) {
        claim(pacer, 0);
        lastClaimAfter(pacer, gap);
    }

    /**
     * The same bound for a task that polls because the role may not use the table's flag (LISTEN on, so NOTIFYs
     * still come): a NOTIFY during the last claim of a spell without rows brings one more claim within the poll
     * interval, then the task is quiet and polls.
     */
    @Test
    void aNotifyDuringTheLastClaimOfAPollingSpellWithoutRowsBringsOneMoreWithinThePollInterval() {
        long poll = 50;
        ClaimPacer pacer = new ClaimPacer(now, true, 200, 200, SWEEP, poll);
        pacer.pollWithoutFlag(now, ears);
        claim(pacer, 0);
        notifyDuringTheSecondClaim(pacer, poll);
        assertThat(pacer.next(now + poll - 1, true)).as("then it polls").isNull();
        now += poll;
        claim(pacer, 0);
        assertThat(flag.arms).as("no flag to arm").isZero();
    }

    /** outbox.linger.ms may be up to 1,000 ms: the looks of a quiet task stay LOOK_INTERVAL_MS apart at most. */
    @Test
    void aLongPaceNeverStretchesTheLooksPastTheLookInterval() {
        ClaimPacer pacer = new ClaimPacer(now, true, 1_000, 1_000, SWEEP, POLL);
        pacer.useFlag(flag, ears);
        for (int i = 0; i < 4; i++) { // active for 3 s: LISTEN off
            claim(pacer, 3);
            now += 1_000;
        }
        assertThat(ears.asked).isFalse();
        ears.done();
        claim(pacer, 0);
        now += 1_000;
        claim(pacer, 0);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(ears.asked).as("LISTEN asked for: the first look waits for it, but not a whole pace").isTrue();
        ears.done();
        for (int i = 0; i < 6; i++) {
            long gap = 0;
            while (pacer.next(now + gap, true) == null) {
                gap++;
            }
            assertThat(gap).as("look %d", i).isLessThanOrEqualTo(ClaimPacer.LOOK_INTERVAL_MS);
            now += gap;
            pacer.claimed(now, 0, false);
        }
        assertThat(flag.arms).isPositive();
    }

    /**
     * Rows that a look finds came without a NOTIFY: the task is active again, and asks its LISTEN session to prove
     * it is alive (a dead one would leave every row to the looks). The control: rows a NOTIFY announced check
     * nothing.
     */
    @Test
    void aLookThatFindsRowsMakesTheTaskActiveAndChecksTheListener() {
        ClaimPacer pacer = quiet();
        looksUntilTheLongestGap(pacer);
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 2);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.ACTIVE);
        assertThat(listenerChecks).isOne();

        ClaimPacer notified = quiet(listening());
        notified.wake();
        claim(notified, 2);
        assertThat(listenerChecks).as("the control: a NOTIFY told of them").isOne();
    }

    @Test
    void aNotifyWakesAQuietTaskAndItClaimsAtOnce() {
        ClaimPacer pacer = quiet();
        looksUntilTheLongestGap(pacer);
        now += 100;
        assertThat(pacer.wake()).as("wake the task thread").isTrue();
        assertThat(pacer.waitMs(now, true)).isZero();
        assertThat(pacer.next(now, true)).isNotNull();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.ACTIVE);
    }

    /** An arming that fails (not for privilege) delays only the NOTIFYs: the looks claim all the same, said once. */
    @Test
    void aFailingArmingStillClaimsAtEveryLookAndNeverFailsThePass() {
        ClaimPacer pacer = idleAfterRows(listening());
        flag.armFailure = new SQLException("canceling statement due to statement timeout", "57014");
        try (LogCapture logs = LogCapture.start()) {
            claim(pacer, 0);
            looksUntilTheLongestGap(pacer);
            assertThat(flag.armAttempts).as("tried at every look").isGreaterThan(5);
            assertThat(flag.arms).isZero();
            assertThat(logs.lines("WARN")).singleElement().asString().contains("Could not arm");
        }
        flag.armFailure = null;
        now += ClaimPacer.LOOK_INTERVAL_MS;
        claim(pacer, 0);
        assertThat(flag.arms).isOne();
    }

    /**
     * A grant revoked while the task runs: an arming refused for privilege would be refused at every look, each an
     * ERROR in the server's log, so the task stops arming and polls while quiet, as a task that started without the
     * grant (the control: any other arming failure is retried at the next look, the test above).
     */
    @Test
    void anArmingRefusedForPrivilegeStopsArmingAndPollsWhileQuiet() {
        ClaimPacer pacer = idleAfterRows(listening());
        flag.armFailure = new SQLException("permission denied for sequence events_wakeup", "42501");
        try (LogCapture logs = LogCapture.start()) {
            claim(pacer, 0); // the first look: refused, its claim goes ahead
            assertThat(pacer.hasFlag()).as("so that the sweeps look for the grant").isFalse();
            assertThat(pacer.polling()).isTrue();
            for (int i = 0; i < 3; i++) {
                assertThat(pacer.next(now + POLL - 1, true)).as("no look between the polls").isNull();
                now += POLL;
                claim(pacer, 0);
            }
            assertThat(logs.lines("WARN")).singleElement().asString()
                .contains("may no longer use the table's wake-up flag");
        }
        assertThat(flag.armAttempts).as("tried once, not at every look").isOne();
        flag.armFailure = null;
        pacer.useFlag(flag, ears); // a sweep found the grant back
        now += POLL;
        claim(pacer, 0);
        assertThat(flag.arms).as("the next look arms").isOne();
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS - 1, true)).isNull();
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS, true)).as("looks LOOK_INTERVAL_MS apart again")
            .isNotNull();
    }

    @Test
    void theSweepClaimsWhateverTheState() {
        ClaimPacer pacer = quiet();
        looksUntilTheLongestGap(pacer);
        long sweepAt = 1_000 + SWEEP;
        while (now + pacer.waitMs(now, true) < sweepAt) {
            now += pacer.waitMs(now, true);
            assertThat(claim(pacer, 0).sweep()).isFalse();
        }
        now = sweepAt;
        assertThat(pacer.next(now, true).sweep()).isTrue();
    }

    @Test
    void withoutRoomNothingIsUsedUpAndTheWaitIsForAnAcknowledgement() {
        ClaimPacer pacer = quiet();
        pacer.wake();
        assertThat(pacer.next(now, false)).isNull();
        assertThat(pacer.next(now, true)).as("the wake still stands").isNotNull();
    }

    @Test
    void withListenOffAQuietTaskClaimsEveryPollInterval() {
        ClaimPacer pacer = new ClaimPacer(now, false, PACE, PACE, SWEEP, POLL);
        twoEmptyClaims(pacer);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        for (int i = 0; i < 3; i++) {
            assertThat(pacer.next(now + POLL - 1, true)).isNull();
            now += POLL;
            claim(pacer, 0);
        }
        assertThat(flag.armAttempts).as("nobody listens: no arming").isZero();
    }

    /**
     * A role with the table's grants alone may not set the flag: its writers never NOTIFY for this task, so it polls
     * while quiet, never arms, and once a sweep finds the grant in place its next look arms.
     */
    @Test
    void aTaskWhoseRoleMayNotUseTheFlagPollsWhileQuietUntilItMay() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.pollWithoutFlag(now, ears);
        twoEmptyClaims(pacer);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        for (int i = 0; i < 2; i++) {
            assertThat(pacer.next(now + POLL - 1, true)).isNull();
            now += POLL;
            claim(pacer, 0);
        }
        assertThat(flag.armAttempts).as("no arming it may not do").isZero();

        pacer.useFlag(flag, ears); // a sweep's look: the grant is in
        now += POLL;
        claim(pacer, 0);
        assertThat(flag.arms).isOne();
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS - 1, true)).isNull();
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS, true)).as("looks LOOK_INTERVAL_MS apart from then on")
            .isNotNull();
    }

    /**
     * A task whose role may not use the flag polls while quiet, and while busy has no more use for NOTIFYs than one
     * with the flag: after DEAF_AFTER_MS active its LISTEN goes off (each receipt of every stamp woke it), and on
     * again as it goes quiet, where a requeue's or another task's NOTIFY wakes it sooner than its poll.
     */
    @Test
    void aPollingTaskStopsListeningWhileBusyAndListensAgainOnceQuiet() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.pollWithoutFlag(now, ears);
        busyFor(pacer, ClaimPacer.DEAF_AFTER_MS + PACE, 3);
        assertThat(ears.asked).as("busy: LISTEN off").isFalse();
        ears.done();
        twoEmptyClaims(pacer);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(ears.asked).as("quiet: LISTEN on again").isTrue();
        assertThat(ears.changes).isEqualTo(2);
        assertThat(pacer.wake()).as("a NOTIFY wakes the quiet task").isTrue();
        assertThat(pacer.next(now, true)).isNotNull();
    }

    /**
     * The arming relies on the NOTIFY of the first writer that finds the flag up, so a look arms only once LISTEN is
     * in place again: meanwhile the looks claim unarmed, the first a pace after the idle time (not at once). The
     * control: the same pacer whose LISTEN never went off arms at once.
     */
    @Test
    void aLookArmsOnlyOnceListenIsBackInPlace() {
        ClaimPacer pacer = listening();
        busyFor(pacer, ClaimPacer.DEAF_AFTER_MS + PACE, 3);
        ears.done();
        twoEmptyClaims(pacer);
        assertThat(ears.asked).as("the idle time: LISTEN asked for").isTrue();
        assertThat(pacer.next(now, true)).as("the first look a pace later").isNull();
        for (int i = 0; i < 3; i++) {
            now += pacer.waitMs(now, true);
            claim(pacer, 0);
        }
        assertThat(flag.arms).as("LISTEN not back yet: no arming").isZero();
        ears.done();
        now += pacer.waitMs(now, true);
        claim(pacer, 0);
        assertThat(flag.arms).as("LISTEN in place: armed").isOne();

        FakeWakeupFlag control = new FakeWakeupFlag();
        ClaimPacer other = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        other.useFlag(control, new ClaimPacer.Listener() {
        });
        idleAfterRows(other);
        assertThat(other.next(now, true)).isNotNull();
        assertThat(control.arms).as("the control: armed at once").isOne();
    }

    /**
     * A polling task deaf while busy takes the flag up at a sweep (the grant given): LISTEN is still off, so at the
     * idle time it asks for LISTEN first and arms only once it is in place, as a task that had the flag all along.
     */
    @Test
    void aFlagTakenUpWhileDeafFromPollingIsArmedOnlyWithListenInPlace() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.pollWithoutFlag(now, ears);
        busyFor(pacer, ClaimPacer.DEAF_AFTER_MS + PACE, 3);
        ears.done();
        assertThat(ears.on).as("deaf").isFalse();
        pacer.useFlag(flag, ears); // a sweep's look while active: the grant is in
        twoEmptyClaims(pacer);
        assertThat(ears.asked).as("the idle time: LISTEN asked for first").isTrue();
        now += pacer.waitMs(now, true);
        claim(pacer, 0);
        assertThat(flag.arms).as("LISTEN not in place: unarmed").isZero();
        ears.done();
        now += pacer.waitMs(now, true);
        claim(pacer, 0);
        assertThat(flag.arms).as("armed once LISTEN is in place").isOne();
    }

    /**
     * A table without the flag (an older outbox.sql) NOTIFYs on every insert: a quiet task waits for it without
     * arming, and looks every LOOK_INTERVAL_MS (a NOTIFY lost, or sent while its LISTEN was off). Busy, it turns
     * LISTEN off as any task does: every insert's NOTIFY woke it.
     */
    @Test
    void onATableThatNotifiesEveryInsertAQuietTaskLooksWithoutArming() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.useFlag(null, ears);
        busyFor(pacer, 2 * ClaimPacer.DEAF_AFTER_MS, 3);
        assertThat(ears.asked).as("busy: LISTEN off").isFalse();
        ears.done();
        twoEmptyClaims(pacer);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(ears.asked).isTrue();
        for (int i = 0; i < 3; i++) {
            assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS - 1, true)).isNull();
            now += ClaimPacer.LOOK_INTERVAL_MS;
            claim(pacer, 0);
        }
        assertThat(pacer.wake()).isTrue();
        assertThat(pacer.next(now + 1, true)).isNotNull();
    }

    /** Claims that each find {@code rows} rows, a pace apart, for {@code ms}. */
    private void busyFor(ClaimPacer pacer, long ms, int rows) {
        long until = now + ms;
        while (now < until) {
            claim(pacer, rows);
            now += PACE;
        }
    }

    /**
     * A task that keeps finding rows has no use for NOTIFYs, and PostgreSQL wakes its LISTEN session for every one
     * sent in the database (receipts above all): after DEAF_AFTER_MS active LISTEN goes off. A claim that finds
     * nothing leaves it off (in a share that brings a row every few claims most do); claims that find nothing for
     * the idle time turn it on again, before the arming. The control: busy for less than that, LISTEN stays on.
     */
    @Test
    void aTaskActiveForASecondTurnsListenOffAndOnlyItsIdleTimeTurnsItOnAgain() {
        ClaimPacer pacer = listening();
        busyFor(pacer, ClaimPacer.DEAF_AFTER_MS - PACE, 3);
        assertThat(ears.changes).as("the control: busy for less than DEAF_AFTER_MS").isZero();
        busyFor(pacer, 2 * PACE, 3);
        assertThat(ears.asked).as("busy for DEAF_AFTER_MS: LISTEN off").isFalse();
        assertThat(ears.changes).isOne();
        busyFor(pacer, 5_000, 3);
        assertThat(ears.changes).as("asked once").isOne();
        ears.done();

        claim(pacer, 0);
        now += PACE;
        claim(pacer, 3);
        assertThat(ears.changes).as("one empty claim among claims with rows: LISTEN stays off").isOne();
        now += PACE;
        twoEmptyClaims(pacer);
        assertThat(ears.asked).as("the idle time: LISTEN on again").isTrue();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
    }

    /**
     * In a share that brings a row every few claims some claims find nothing; the task is active all the same, and
     * after DEAF_AFTER_MS its LISTEN goes off (the rule before counted only unbroken claims with rows, and such a
     * task listened forever, woken by every receipt of every task).
     */
    @Test
    void aTaskWhoseClaimsOftenFindNothingStillStopsListeningAfterASecondActive() {
        ClaimPacer pacer = listening();
        long until = now + 2 * ClaimPacer.DEAF_AFTER_MS;
        for (int i = 0; now < until; i++) {
            claim(pacer, i % 3 == 0 ? 0 : 1);
            now += PACE;
        }
        assertThat(ears.asked).as("LISTEN off").isFalse();
        assertThat(ears.changes).isOne();
        assertThat(pacer.state()).as("never idle").isEqualTo(ClaimPacer.State.ACTIVE);
    }

    /** Arrival times from {@code from}, {@code gapMs} apart, before {@code until}. */
    private static List<Long> every(long from, long gapMs, long until) {
        return LongStream.iterate(from, t -> t < until, t -> t + gapMs).boxed().toList();
    }

    /** How often the pacers of {@link #claimArrivals} went quiet. */
    private int quietSpells;

    /**
     * Rows that arrive at {@code arrivals}, until {@code until}, one ms at a time: each claim the pacer asks for finds
     * the rows that arrived since the last, and a row that arrives while the task is not active wakes it (its writer
     * found the flag up and NOTIFYs). Returns the rows claimed.
     */
    private long claimArrivals(ClaimPacer pacer, List<Long> arrivals, long until) {
        int arrived = 0;
        int claimed = 0;
        for (; now < until; now++) {
            while (arrived < arrivals.size() && arrivals.get(arrived) <= now) {
                arrived++;
                if (pacer.state() != ClaimPacer.State.ACTIVE) {
                    pacer.wake();
                }
            }
            if (pacer.next(now, true) != null) {
                boolean active = pacer.state() == ClaimPacer.State.ACTIVE;
                pacer.claimed(now, arrived - claimed, false);
                claimed = arrived;
                quietSpells += active && pacer.state() == ClaimPacer.State.QUIET ? 1 : 0;
            }
        }
        return claimed;
    }

    /**
     * Many tasks at a moderate rate: each share brings a row every few tens of ms, and a gap of twice the idle floor
     * (IDLE_BEFORE_ARMING_MS) is common there. The task stays active through it (no arming, so no NOTIFY asked of
     * the next writer and no quiet task woken): the idle time is IDLE_GAPS_BEFORE_ARMING of the share's own gaps.
     * The control: a share whose rows come a few ms apart goes quiet in the same gap.
     */
    @Test
    void aShareThatBringsARowEveryFewClaimsStaysActiveThroughAGapTheIdleFloorWouldArmOn() {
        long start = now;
        List<Long> rows = new ArrayList<>(every(start, 60, start + 2_000)); // the last at 1,980
        rows.addAll(every(start + 2_200, 60, start + 4_000));
        ClaimPacer sparse = listening(MAX_PACE);
        long claimed = claimArrivals(sparse, rows, start + 4_100);
        assertThat(quietSpells).as("60 ms gaps, then one of 220 ms: still active").isZero();
        assertThat(flag.armAttempts).isZero();
        assertThat(claimed).as("every row claimed").isEqualTo(rows.size());
        List<Long> after = every(start + 3_940 + 420, 60, start + 5_000);
        assertThat(claimArrivals(sparse, after, start + 5_050)).isEqualTo(after.size());
        assertThat(quietSpells).as("a gap of 420 ms, over five of 60: quiet").isOne();

        start = now;
        quietSpells = 0;
        ClaimPacer dense = new ClaimPacer(now, true, PACE, MAX_PACE, SWEEP, POLL);
        dense.useFlag(new FakeWakeupFlag(), new ClaimPacer.Listener() {
        });
        List<Long> denseRows = new ArrayList<>(every(start, 3, start + 2_000)); // the last at 1,998
        denseRows.addAll(every(start + 2_218, 3, start + 4_000));
        assertThat(claimArrivals(dense, denseRows, start + 4_100)).isEqualTo(denseRows.size());
        assertThat(quietSpells).as("the control: 3 ms gaps, the same 220 ms gap goes quiet").isOne();
    }

    /**
     * A share sparser than IDLE_BEFORE_ARMING_MAX_MS allows for (a row every 150 ms: five gaps would be 750 ms) is
     * cheaper woken for each row than claimed for through its gaps: it goes quiet after the floor, as before.
     */
    @Test
    void aShareTooSparseToClaimForThroughItsGapsArmsAfterTheFloor() {
        long start = now;
        List<Long> rows = new ArrayList<>(every(start, 60, start + 1_000));
        rows.addAll(every(start + 1_000 + 90, 150, start + 4_000));
        long claimed = claimArrivals(listening(MAX_PACE), rows, start + 4_000 + ClaimCadence.IDLE_BEFORE_ARMING_MS);
        assertThat(quietSpells).as("quiet in its 150 ms gaps").isGreaterThan(5);
        assertThat(claimed).as("every row claimed").isEqualTo(rows.size());
    }
}
