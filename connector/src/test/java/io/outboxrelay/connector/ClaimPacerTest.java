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
 * for, when, and when it arms and looks at the flag. The store's side (the snapshot a claim reads) is
 * {@code WakeupFlagIT}; the relay on a real worker {@code WakeupRaceIT}.
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
        pacer.useFlag(now, flag, ears);
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

    /** The claim due now, told that it found {@code rows}, with nothing watched still running. */
    private ClaimPacer.Claim claim(ClaimPacer pacer, int rows) {
        ClaimPacer.Claim claim = pacer.next(now, true);
        assertThat(claim).as("a claim is due at %d", now).isNotNull();
        pacer.claimed(now, rows, false, List.of(), claim.capture() ? List.of() : null);
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

    /** From the start (ACTIVE) to QUIET: two empty claims, the arming, the claim that notes the writers. */
    private ClaimPacer quiet() {
        return quiet(listening());
    }

    private ClaimPacer quiet(ClaimPacer active) {
        ClaimPacer pacer = twoEmptyClaims(active);
        ClaimPacer.Claim afterArming = claim(pacer, 0);
        assertThat(afterArming.capture()).isTrue();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        return pacer;
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
        pacer.claimed(now, 200, true, List.of(), null);
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
    void emptyClaimsArmTheFlagOnlyAfterTheIdleTimeAndTheNextClaimNotesTheWritersInProgress() {
        ClaimPacer pacer = listening();
        claim(pacer, 3);
        for (long idle = PACE; idle < ClaimCadence.IDLE_BEFORE_ARMING_MS; idle += PACE) {
            now += PACE;
            claim(pacer, 0);
            assertThat(flag.arms).as("a gap of %d ms between rows is not idle yet", idle).isZero();
        }
        now += PACE;
        claim(pacer, 0);
        ClaimPacer.Claim next = pacer.next(now, true);
        assertThat(flag.arms).as("armed before the claim, at once").isOne();
        assertThat(next.capture()).isTrue();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.SETTLING);
    }

    /**
     * Without room (the in-flight window is full: a topic is down, say) nothing can be claimed, so a due sweep
     * or released row must not make the wait zero: the task would spin through Connect's poll loop.
     */
    @Test
    void withoutRoomADueSweepOrRetryDoesNotMakeTheTaskSpin() {
        ClaimPacer pacer = listening();
        claim(pacer, 3);
        pacer.retryAt(now + 1);
        now += SWEEP;
        assertThat(pacer.next(now, false)).isNull();
        assertThat(pacer.waitMs(now, false)).isEqualTo(ClaimPacer.MAX_WAIT_MS);
        assertThat(pacer.waitMs(now, true)).as("with room the sweep is due at once").isZero();
    }

    /**
     * A writer that read the flag down before the arming is in progress in the snapshot of the claim after
     * it: the task claims each time some of those end (soon), backs off while none does, and is quiet only
     * once none is left. Its claims carry the watch; the store answers with what still runs.
     */
    @Test
    void settlingClaimsWhenAWatchedWriterEndsAndIsQuietOnceNoneIsLeft() {
        ClaimPacer pacer = twoEmptyClaims(listening());
        ClaimPacer.Claim afterArming = pacer.next(now, true);
        pacer.claimed(now, 0, false, List.of(), List.of("100", "101"));
        assertThat(afterArming.capture()).isTrue();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.SETTLING);

        now += PACE;
        ClaimPacer.Claim watching = pacer.next(now, true);
        assertThat(watching.watch()).containsExactly("100", "101");
        pacer.claimed(now, 0, false, List.of("100", "101"), null); // none ended: back off
        assertThat(pacer.next(now + PACE, true)).isNull();
        now += 2 * PACE; // the doubled wait
        assertThat(pacer.next(now, true)).isNotNull();
        pacer.claimed(now, 0, false, List.of("101"), null); // 100 ended
        now += PACE; // one ended: soon again
        assertThat(pacer.next(now, true).watch()).containsExactly("101");
        pacer.claimed(now, 0, false, List.of(), null);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS, true)).as("quiet: nothing due").isNull();
    }

    @Test
    void aSettlingClaimThatFindsRowsMakesTheTaskActiveAgain() {
        ClaimPacer pacer = twoEmptyClaims(listening());
        pacer.next(now, true);
        pacer.claimed(now, 0, false, List.of(), List.of("7"));
        now += PACE;
        pacer.next(now, true);
        pacer.claimed(now, 1, false, List.of(), null);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.ACTIVE);
        now += PACE;
        assertThat(pacer.next(now, true).watch()).as("the watch went with the arming").isEmpty();
    }

    @Test
    void aNotifyWakesAQuietTaskAndItClaimsAtOnce() {
        ClaimPacer pacer = quiet();
        now += 5_000;
        assertThat(pacer.wake()).as("wake the task thread").isTrue();
        assertThat(pacer.waitMs(now, true)).isZero();
        assertThat(pacer.next(now, true)).isNotNull();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.ACTIVE);
    }

    @Test
    void aQuietTaskLooksEveryLookIntervalAndClaimsNothingWhileNoWriterClearedTheFlag() {
        ClaimPacer pacer = quiet();
        for (int i = 1; i <= 10; i++) {
            now += ClaimPacer.LOOK_INTERVAL_MS;
            assertThat(pacer.next(now, true)).isNull();
            assertThat(flag.looks).isEqualTo(i);
        }
    }

    /**
     * A writer took the flag down and rolled back (or its NOTIFY found the queue too full, or the LISTEN
     * session died unseen), and another task armed the flag again since: the look compares counts, not the
     * flag, so it claims; and since no NOTIFY came, it asks the listener to prove itself alive.
     */
    @Test
    void aLookThatSeesTheCountMoveClaimsWhateverTheFlagReadsAndChecksTheListener() {
        ClaimPacer pacer = quiet();
        flag.writerClears();
        flag.armed = true; // another task's arming
        now += ClaimPacer.LOOK_INTERVAL_MS;
        assertThat(pacer.next(now, true)).isNotNull();
        assertThat(listenerChecks).isOne();
    }

    @Test
    void aClearWhoseNotifyArrivedDoesNotCheckTheListener() {
        ClaimPacer pacer = quiet();
        flag.writerClears();
        pacer.wake();
        assertThat(pacer.next(now, true)).isNotNull();
        assertThat(listenerChecks).isZero();
    }

    @Test
    void aFailingArmingClaimsAtEachLookUntilItWorksAndNeverFailsThePass() {
        ClaimPacer pacer = listening();
        flag.armFailure = new SQLException("canceling statement due to statement timeout", "57014");
        twoEmptyClaims(pacer);
        ClaimPacer.Claim unarmed = claim(pacer, 0);
        assertThat(unarmed.capture()).isFalse();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.ACTIVE);
        assertThat(pacer.next(now + ClaimPacer.LOOK_INTERVAL_MS - 1, true)).as("not hammering it").isNull();
        now += ClaimPacer.LOOK_INTERVAL_MS;
        flag.armFailure = null;
        assertThat(pacer.next(now, true).capture()).isTrue();
        assertThat(flag.arms).isOne();
    }

    /**
     * A grant revoked while the task runs: an arming refused for privilege would be refused at every look, each an
     * ERROR in the server's log, so the task stops arming and polls while quiet, as a task that started without the
     * grant (the control: any other arming failure is retried a look later, the test above).
     */
    @Test
    void anArmingRefusedForPrivilegeStopsArmingAndPollsWhileQuiet() {
        ClaimPacer pacer = listening();
        flag.armFailure = new SQLException("permission denied for sequence events_wakeup", "42501");
        twoEmptyClaims(pacer);
        assertThat(claim(pacer, 0).capture()).as("the claim goes ahead unarmed").isFalse();
        assertThat(pacer.hasFlag()).as("so that the sweeps look for the grant").isFalse();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        for (int i = 0; i < 3; i++) {
            assertThat(pacer.next(now + POLL - 1, true)).as("no arming or claim at the looks").isNull();
            now += POLL;
            claim(pacer, 0);
        }
        assertThat(flag.armAttempts).as("tried once, not at every look").isOne();
        flag.armFailure = null;
        pacer.useFlag(now, flag, ears); // a sweep found the grant back
        quiet(pacer);
        assertThat(flag.arms).isOne();
    }

    /**
     * The grant revoked while the task is quiet and armed: its look is refused first. A look refused for privilege
     * would be refused at every look after it, so the task claims, stops using the flag and polls while quiet, and
     * says so once (it said "until it can" and then, at the arming, the same again; found by review).
     */
    @Test
    void aLookRefusedForPrivilegeClaimsThenPollsWithoutTheFlagSaidOnce() {
        ClaimPacer pacer = quiet();
        int armed = flag.armAttempts;
        flag.lookFailure = new SQLException("permission denied for function events_wakeup_cleared", "42501");
        try (LogCapture logs = LogCapture.start()) {
            now += ClaimPacer.LOOK_INTERVAL_MS;
            assertThat(claim(pacer, 0).capture()).as("a look that cannot tell claims").isFalse();
            assertThat(pacer.hasFlag()).as("so that the sweeps look for the grant").isFalse();
            assertThat(pacer.polling()).isTrue();
            now += ClaimCadence.IDLE_BEFORE_ARMING_MS;
            claim(pacer, 0);
            assertThat(pacer.state()).as("quiet at the idle time, unarmed").isEqualTo(ClaimPacer.State.QUIET);
            for (int i = 0; i < 3; i++) {
                assertThat(pacer.next(now + POLL - 1, true)).as("no look or claim between the polls").isNull();
                now += POLL;
                claim(pacer, 0);
            }
            assertThat(logs.lines("WARN")).singleElement().asString()
                .contains("may no longer use the table's wake-up flag");
        }
        assertThat(flag.looks).as("looked once").isOne();
        assertThat(flag.armAttempts).as("and never armed again").isEqualTo(armed);
    }

    @Test
    void aFailingLookClaims() {
        ClaimPacer pacer = quiet();
        flag.lookFailure = new SQLException("statement timeout", "57014");
        now += ClaimPacer.LOOK_INTERVAL_MS;
        assertThat(pacer.next(now, true)).isNotNull();
    }

    @Test
    void theSweepAndReleasedRowsClaimWhateverTheState() {
        ClaimPacer pacer = quiet();
        pacer.retryAt(now + 2_000);
        now += 2_000;
        assertThat(pacer.next(now, true)).isNotNull();
        pacer.claimed(now, 0, false, List.of(), null);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        now += SWEEP;
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
        pacer.useFlag(now, flag, ears);
        twoEmptyClaims(pacer);
        assertThat(flag.arms).as("nobody listens: no arming").isZero();
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(pacer.next(now + POLL - 1, true)).isNull();
        now += POLL;
        assertThat(pacer.next(now, true)).isNotNull();
    }

    /**
     * A role with the table's grants alone may not set the flag: its writers never NOTIFY for this task, so it polls
     * while quiet, never arms, and once a sweep finds the grant in place it arms and waits for NOTIFYs. The control is
     * the table without the flag above: there a quiet task claims nothing before a NOTIFY.
     */
    @Test
    void aTaskWhoseRoleMayNotUseTheFlagPollsWhileQuietUntilItMay() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.pollWithoutFlag(now, ears);
        twoEmptyClaims(pacer);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(flag.arms).as("no arming it may not do").isZero();
        assertThat(pacer.next(now + POLL - 1, true)).isNull();
        now += POLL;
        claim(pacer, 0);
        now += POLL;
        assertThat(pacer.next(now, true)).as("every poll interval").isNotNull();
        pacer.claimed(now, 0, false, List.of(), null);

        pacer.useFlag(now, flag, ears); // a sweep's look: the grant is in
        assertThat(pacer.state()).as("a quiet task found the flag: active, to arm at its idle time")
            .isEqualTo(ClaimPacer.State.ACTIVE);
        quiet(pacer);
        assertThat(flag.arms).isEqualTo(1);
        for (int i = 1; i <= 8; i++) { // two poll intervals: armed, it looks, and claims nothing without a clear
            now += ClaimPacer.LOOK_INTERVAL_MS;
            assertThat(pacer.next(now, true)).isNull();
        }
        assertThat(flag.looks).isEqualTo(8);
    }

    /**
     * A task whose role may not use the flag polls while quiet, and while busy has no more use for NOTIFYs than one
     * with the flag: after DEAF_AFTER_MS active its LISTEN goes off (each receipt of every stamp woke it), and on
     * again as it goes quiet, where a requeue's or another task's NOTIFY wakes it sooner than its poll (found by
     * review). The control: on a table without the flag, which NOTIFYs every insert, LISTEN is never turned off.
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

        ClaimPacer older = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        older.useFlag(now, null, ears);
        busyFor(older, 2 * ClaimPacer.DEAF_AFTER_MS, 3);
        assertThat(ears.changes).as("no flag, not polling: LISTEN stays on").isEqualTo(2);
    }

    /**
     * A polling task deaf while busy takes the flag up at a sweep (the grant given): LISTEN is still off, so at the
     * idle time it asks for LISTEN first and arms only once it is in place, as a task that had the flag all along.
     * Armed while deaf, the first writer's NOTIFY would have no listener and its row would wait for a look.
     */
    @Test
    void aFlagTakenUpWhileDeafFromPollingIsArmedOnlyWithListenInPlace() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.pollWithoutFlag(now, ears);
        busyFor(pacer, ClaimPacer.DEAF_AFTER_MS + PACE, 3);
        ears.done();
        assertThat(ears.on).as("deaf").isFalse();
        pacer.useFlag(now, flag, ears); // a sweep's look while active: the grant is in
        twoEmptyClaims(pacer);
        assertThat(ears.asked).as("the idle time: LISTEN asked for first").isTrue();
        for (int i = 0; i < 3; i++) {
            now += PACE;
            assertThat(claim(pacer, 0).capture()).as("LISTEN not in place: unarmed").isFalse();
        }
        assertThat(flag.arms).isZero();
        ears.done();
        now += ClaimPacer.ARM_RETRY_MS;
        for (int i = 0; i < 3 && flag.arms == 0; i++) {
            now += PACE;
            claim(pacer, 0);
        }
        assertThat(flag.arms).as("armed once LISTEN is in place").isOne();
    }

    @Test
    void onATableThatNotifiesEveryInsertAQuietTaskWaitsForTheNotifyWithoutArming() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.useFlag(now, null, ears);
        twoEmptyClaims(pacer);
        assertThat(pacer.state()).isEqualTo(ClaimPacer.State.QUIET);
        assertThat(pacer.waitMs(now, true)).isEqualTo(ClaimPacer.MAX_WAIT_MS);
        assertThat(pacer.next(now + 10_000, true)).isNull();
        assertThat(pacer.wake()).isTrue();
        assertThat(pacer.next(now + 10_000, true)).isNotNull();
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
        assertThat(pacer.next(now, true)).as("the arming waits for it: no claim before a pace").isNull();
        now += PACE;
        assertThat(claim(pacer, 0).capture()).as("LISTEN not in place yet: a claim, unarmed").isFalse();
        assertThat(flag.arms).isZero();
        ears.done();
        now += PACE;
        assertThat(claim(pacer, 0).capture()).as("LISTEN in place: armed").isTrue();
        assertThat(flag.arms).isOne();
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
        assertThat(flag.arms).as("never idle: no arming").isZero();
    }

    /** Arrival times from {@code from}, {@code gapMs} apart, before {@code until}. */
    private static List<Long> every(long from, long gapMs, long until) {
        return LongStream.iterate(from, t -> t < until, t -> t + gapMs).boxed().toList();
    }

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
            ClaimPacer.Claim due = pacer.next(now, true);
            if (due != null) {
                pacer.claimed(now, arrived - claimed, false, List.of(), due.capture() ? List.of() : null);
                claimed = arrived;
            }
        }
        return claimed;
    }

    /**
     * Many tasks at a moderate rate: each share brings a row every few tens of ms, and a gap of twice the idle floor
     * (IDLE_BEFORE_ARMING_MS) is common there. The task stays active through it (no arming, so no NOTIFY asked of
     * the next writer and no quiet task woken): the idle time is IDLE_GAPS_BEFORE_ARMING of the share's own gaps.
     * The control: a share whose rows come a few ms apart arms in the same gap.
     */
    @Test
    void aShareThatBringsARowEveryFewClaimsStaysActiveThroughAGapTheIdleFloorWouldArmOn() {
        long start = now;
        List<Long> rows = new ArrayList<>(every(start, 60, start + 2_000)); // the last at 1,980
        rows.addAll(every(start + 2_200, 60, start + 4_000));
        ClaimPacer sparse = listening(MAX_PACE);
        long claimed = claimArrivals(sparse, rows, start + 4_100);
        assertThat(flag.arms).as("60 ms gaps, then one of 220 ms: still active").isZero();
        assertThat(claimed).as("every row claimed").isEqualTo(rows.size());
        List<Long> after = every(start + 3_940 + 420, 60, start + 5_000);
        assertThat(claimArrivals(sparse, after, start + 5_050)).isEqualTo(after.size());
        assertThat(flag.arms).as("a gap of 420 ms, over five of 60: armed").isOne();

        start = now;
        FakeWakeupFlag control = new FakeWakeupFlag();
        ClaimPacer dense = new ClaimPacer(now, true, PACE, MAX_PACE, SWEEP, POLL);
        dense.useFlag(now, control, new ClaimPacer.Listener() {
        });
        List<Long> denseRows = new ArrayList<>(every(start, 3, start + 2_000)); // the last at 1,998
        denseRows.addAll(every(start + 2_218, 3, start + 4_000));
        assertThat(claimArrivals(dense, denseRows, start + 4_100)).isEqualTo(denseRows.size());
        assertThat(control.arms).as("the control: 3 ms gaps, the same 220 ms gap arms").isOne();
    }

    /**
     * A share sparser than IDLE_BEFORE_ARMING_MAX_MS allows for (a row every 150 ms: five gaps would be 750 ms) is
     * cheaper woken for each row than claimed for through its gaps: it arms after the floor, as before.
     */
    @Test
    void aShareTooSparseToClaimForThroughItsGapsArmsAfterTheFloor() {
        long start = now;
        List<Long> rows = new ArrayList<>(every(start, 60, start + 1_000));
        rows.addAll(every(start + 1_000 + 90, 150, start + 4_000));
        long claimed = claimArrivals(listening(MAX_PACE), rows, start + 4_000 + ClaimCadence.IDLE_BEFORE_ARMING_MS);
        assertThat(flag.arms).as("it armed in its 150 ms gaps").isGreaterThan(5);
        assertThat(claimed).as("every row claimed").isEqualTo(rows.size());
    }

    /**
     * The arming relies on the NOTIFY of the first writer that finds the flag up, so it waits until LISTEN is in
     * place again: meanwhile claims go on unarmed, a pace apart (not back to back). The control: the same pacer
     * whose LISTEN came back at once arms at its next claim, a pace after the idle time.
     */
    @Test
    void theArmingWaitsUntilListenIsBackInPlace() {
        ClaimPacer pacer = listening();
        busyFor(pacer, ClaimPacer.DEAF_AFTER_MS + PACE, 3);
        ears.done();
        twoEmptyClaims(pacer);
        now += PACE; // LISTEN asked for: the next claim a pace later
        for (int i = 0; i < 3; i++) {
            ClaimPacer.Claim unarmed = claim(pacer, 0);
            assertThat(unarmed.capture()).as("LISTEN not back yet: no arming").isFalse();
            assertThat(pacer.next(now + PACE - 1, true)).as("a pace apart").isNull();
            now += PACE;
        }
        assertThat(flag.arms).isZero();
        ears.done();
        assertThat(claim(pacer, 0).capture()).as("LISTEN in place: armed").isTrue();
        assertThat(flag.arms).isOne();

        FakeWakeupFlag control = new FakeWakeupFlag();
        ClaimPacer other = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        other.useFlag(now, control, new ClaimPacer.Listener() {
        });
        busyFor(other, ClaimPacer.DEAF_AFTER_MS + PACE, 3);
        twoEmptyClaims(other);
        now += PACE;
        assertThat(claim(other, 0).capture()).as("the control: armed at its next claim").isTrue();
    }

    /** Without the flag (an older table) a quiet task relies on every writer's NOTIFY: LISTEN always stays on. */
    @Test
    void onATableWithoutTheFlagListenStaysOnHoweverBusyTheTask() {
        ClaimPacer pacer = new ClaimPacer(now, true, PACE, PACE, SWEEP, POLL);
        pacer.useFlag(now, null, ears);
        busyFor(pacer, 3 * ClaimPacer.DEAF_AFTER_MS, 3);
        assertThat(ears.changes).isZero();
    }
}
