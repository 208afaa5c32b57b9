package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.WakeupCycle.State;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The wake-up cycle as pure logic, against a flag whose answers the test gives. */
class WakeupCycleTest {
    private FakeWakeupFlag flag;
    private int claimsAsked;
    private WakeupCycle cycle;

    @BeforeEach
    void fresh() {
        flag = new FakeWakeupFlag();
        claimsAsked = 0;
        cycle = new WakeupCycle(flag, () -> claimsAsked++, 0);
    }

    @Test
    void fullClaimsNeverArmAndTheFirstShortOneDoesAndAsksForAClaim() throws Exception {
        cycle.afterClaim(200, true, 0);
        assertThat(flag.arms).isZero();
        assertThat(cycle.state()).isEqualTo(State.BUSY);
        cycle.afterClaim(17, false, 1);
        assertThat(flag.arms).isEqualTo(1);
        assertThat(claimsAsked).as("a writer may have committed between the last claim and the arming").isEqualTo(1);
        assertThat(cycle.state()).isEqualTo(State.SETTLING);
    }

    @Test
    void withALingerABusyTaskClaimsAgainAfterItWithoutArmingAndArmsOnceAClaimFindsNothing() throws Exception {
        WakeupCycle lingering = new WakeupCycle(flag, () -> claimsAsked++, 20);
        lingering.afterClaim(200, true, 0);
        lingering.afterClaim(17, false, 1); // rows keep arriving, fewer than asked for
        assertThat(flag.arms).as("writers send no NOTIFY while the task lingers").isZero();
        assertThat(lingering.state()).isEqualTo(State.BUSY);
        assertThat(lingering.idleWaitMs(1, 250)).as("waits for the linger to pass").isEqualTo(20);
        lingering.beforeClaim(20);
        assertThat(claimsAsked).as("not before the linger has passed").isZero();
        lingering.beforeClaim(21);
        assertThat(claimsAsked).isEqualTo(1);
        lingering.beforeClaim(22);
        assertThat(claimsAsked).as("one claim per linger").isEqualTo(1);
        assertThat(lingering.idleWaitMs(22, 250)).isEqualTo(250);

        lingering.afterClaim(0, false, 22); // the trickle stopped: now the flag is armed
        assertThat(flag.arms).isEqualTo(1);
        assertThat(lingering.state()).isEqualTo(State.SETTLING);
        assertThat(lingering.idleWaitMs(22, 250)).as("settling looks at the writers at once, not at an old linger")
            .isEqualTo(1);
    }

    @Test
    void aNotifyThatReachesALingeringTaskDoesNotArmItAndTheLingerGoesOn() throws Exception {
        WakeupCycle lingering = new WakeupCycle(flag, () -> claimsAsked++, 20);
        lingering.afterClaim(5, false, 0);
        lingering.notified(); // another task had armed the flag; a writer cleared it
        lingering.beforeClaim(1);
        assertThat(flag.arms).as("arming would only cost the next writer a NOTIFY").isZero();
        assertThat(lingering.idleWaitMs(1, 250)).as("still lingering until 20").isEqualTo(19);
        lingering.beforeClaim(20);
        assertThat(claimsAsked).isEqualTo(1);
    }

    @Test
    void aShortClaimAfterABusyOneArmsEvenWhenBothPassesFallInTheMillisecondOfTheLastArming() throws Exception {
        cycle.afterClaim(0, false, 5); // armed at 5
        cycle.beforeClaim(5); // the next pass, still at 5: no writer in progress, FINAL
        cycle.afterClaim(200, true, 5); // full: busy again, the watch on the arming's writers is dropped
        cycle.beforeClaim(5);
        cycle.afterClaim(3, false, 5); // short: rows keep arriving, and no NOTIFY may come for them
        assertThat(flag.arms).as("armed again although the clock still reads 5").isEqualTo(2);
        assertThat(cycle.state()).isEqualTo(State.SETTLING);
    }

    @Test
    void whileWritersFromTheArmingRemainEachEndingAsksForAClaimThenOneFinalClaimLeavesItQuiet() throws Exception {
        flag.inProgress = 2;
        cycle.afterClaim(3, false, 0);
        claimsAsked = 0;

        flag.endings.add(false);
        cycle.beforeClaim(0);
        assertThat(claimsAsked).isZero();
        assertThat(cycle.idleWaitMs(0, 250)).as("looks again after 4 ms: doubled").isEqualTo(4);
        cycle.beforeClaim(3);
        assertThat(flag.looks).as("not before its time").isEqualTo(1);

        flag.endings.add(true);
        cycle.beforeClaim(4);
        assertThat(claimsAsked).as("a writer ended: claim its row").isEqualTo(1);
        assertThat(cycle.idleWaitMs(4, 250)).as("back to 2 ms").isEqualTo(2);
        cycle.afterClaim(0, false, 4);
        assertThat(cycle.state()).isEqualTo(State.SETTLING);

        flag.endings.add(true);
        cycle.beforeClaim(6);
        assertThat(cycle.state()).isEqualTo(State.FINAL);
        assertThat(claimsAsked).isEqualTo(3);
        cycle.afterClaim(0, false, 6);
        assertThat(cycle.state()).isEqualTo(State.QUIET);
        assertThat(flag.arms).isEqualTo(1);
    }

    @Test
    void theLookAtTheWritersBacksOffToTheIdleWaitWhileALongTransactionRuns() throws Exception {
        flag.inProgress = 1; // never ends
        cycle.afterClaim(1, false, 0);
        long now = 0;
        int polls = 0;
        List<Long> waits = new ArrayList<>();
        while (now < 2_000) {
            flag.endings.add(false);
            cycle.beforeClaim(now);
            long wait = cycle.idleWaitMs(now, ClaimSchedule.MAX_IDLE_WAIT_MS);
            waits.add(wait);
            now += wait;
            polls++;
        }
        assertThat(waits.subList(0, 5)).as("doubling").containsExactly(4L, 8L, 16L, 32L, 64L);
        assertThat(waits.subList(0, 6).stream().mapToLong(Long::longValue).sum())
            .as("the sixth wait ends when the look at the flag is due").isEqualTo(ClaimSchedule.MAX_IDLE_WAIT_MS);
        assertThat(waits).allSatisfy(w -> assertThat(w).isBetween(1L, ClaimSchedule.MAX_IDLE_WAIT_MS));
        long idleWaits = 2_000 / ClaimSchedule.MAX_IDLE_WAIT_MS;
        assertThat(flag.looks).as("then about one look at the writers per idle wait").isLessThanOrEqualTo((int) (6 + idleWaits + 1));
        assertThat(polls).as("and one look at the flag").isLessThanOrEqualTo((int) (flag.looks + idleWaits + 1));
    }

    @Test
    void aQuietTaskArmsAgainWhenTheFlagWasClearedWithoutANotifyReachingIt() throws Exception {
        cycle.afterClaim(0, false, 0); // BUSY at start: arms
        cycle.beforeClaim(0); // no writer in progress: FINAL
        cycle.afterClaim(0, false, 0);
        assertThat(cycle.state()).isEqualTo(State.QUIET);

        cycle.beforeClaim(100);
        assertThat(flag.arms).as("still armed, nothing to do").isEqualTo(1);
        flag.armed = false; // a writer cleared it, then rolled back: no NOTIFY
        cycle.beforeClaim(200);
        assertThat(flag.arms).as("not before the next look").isEqualTo(1);
        cycle.beforeClaim(ClaimSchedule.MAX_IDLE_WAIT_MS);
        assertThat(flag.arms).isEqualTo(2);
        assertThat(cycle.state()).isEqualTo(State.SETTLING);
        assertThat(flag.wakes).as("and it sends the NOTIFY the writer did not").isEqualTo(1);
    }

    /** An idle wait cut short (an acknowledgement) does not put the next look off: it ends when the look is due. */
    @Test
    void aQuietTaskWaitsNoLongerThanItsNextLookAtTheFlag() throws Exception {
        cycle.afterClaim(0, false, 0);
        cycle.beforeClaim(0); // the look at 0: the next one is due at MAX_IDLE_WAIT_MS
        cycle.afterClaim(0, false, 0);
        assertThat(cycle.state()).isEqualTo(State.QUIET);
        assertThat(cycle.idleWaitMs(100, ClaimSchedule.MAX_IDLE_WAIT_MS))
            .isEqualTo(ClaimSchedule.MAX_IDLE_WAIT_MS - 100);
        assertThat(cycle.idleWaitMs(ClaimSchedule.MAX_IDLE_WAIT_MS + 5, ClaimSchedule.MAX_IDLE_WAIT_MS))
            .as("overdue: at once").isEqualTo(1);
    }

    /**
     * Two tasks, one flag: a writer in task A's share clears it and notifies, a writer in task B's share
     * read it cleared and sends nothing. Task B finds nothing when the NOTIFY wakes it, but arms again and
     * settles on the writers in progress, so it claims B's row when that writer commits.
     */
    @Test
    void aNotifyArmsEveryTaskThatReceivesItEvenWhenItsClaimFindsNothing() throws Exception {
        cycle.afterClaim(0, false, 0);
        cycle.beforeClaim(0);
        cycle.afterClaim(0, false, 0);
        assertThat(cycle.state()).isEqualTo(State.QUIET);
        flag.armed = false; // task A's writer cleared it

        flag.inProgress = 1; // task B's writer, who read it cleared
        cycle.notified();
        cycle.beforeClaim(10);
        assertThat(flag.arms).isEqualTo(2);
        assertThat(cycle.state()).isEqualTo(State.SETTLING);
        cycle.afterClaim(0, false, 10);
        assertThat(flag.arms).as("armed once in a pass").isEqualTo(2);

        flag.endings.add(true);
        claimsAsked = 0;
        cycle.beforeClaim(12);
        assertThat(claimsAsked).as("B's writer ended: claim").isPositive();
    }

    @Test
    void aSettlingTaskAlsoArmsAgainWhenTheFlagWasClearedWithoutANotify() throws Exception {
        flag.inProgress = 1; // a long transaction keeps the task settling
        cycle.afterClaim(1, false, 0);
        flag.armed = false; // cleared by a writer that rolled back
        flag.endings.add(false);
        cycle.beforeClaim(ClaimSchedule.MAX_IDLE_WAIT_MS);
        assertThat(flag.arms).isEqualTo(2);
    }

    /**
     * Tasks that share one table's flag, quiet and armed. A writer clears the flag and rolls back (no
     * NOTIFY); the next writer reads it cleared and commits without one, its row in another task's share.
     * The first task to look finds the flag cleared: it arms and wakes every task, so the others claim too.
     * A task the wake does not reach (the control: as before this fix) finds the flag armed again at its
     * own look and claims nothing, and the row would wait for the sweep.
     */
    @Test
    void aTaskThatFindsTheFlagClearedWithoutANotifyWakesEveryTaskOfTheTable() throws Exception {
        boolean[] shared = {false};
        int[] wakes = {0};
        int[] claims = new int[3];
        List<WakeupCycle> reached = new ArrayList<>();
        List<WakeupCycle> tasks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int task = i;
            WakeupCycle.Flag view = new WakeupCycle.Flag() {
                @Override
                public boolean arm(boolean wakeEveryTask) {
                    shared[0] = true;
                    if (wakeEveryTask) {
                        wakes[0]++;
                        reached.forEach(WakeupCycle::notified);
                    }
                    return true;
                }

                @Override
                public boolean someEnded() {
                    return false;
                }

                @Override
                public boolean waiting() {
                    return false;
                }

                @Override
                public boolean armed() {
                    return shared[0];
                }
            };
            tasks.add(new WakeupCycle(view, () -> claims[task]++, 0));
        }
        reached.addAll(tasks.subList(0, 2)); // task 2 is the control: no NOTIFY reaches it
        for (WakeupCycle t : tasks) { // each runs out of rows, arms, settles, and goes quiet
            t.afterClaim(0, false, 0);
            t.beforeClaim(0);
            t.afterClaim(0, false, 0);
            assertThat(t.state()).isEqualTo(State.QUIET);
        }
        assertThat(wakes[0]).as("running out of rows wakes nobody").isZero();
        int[] before = claims.clone();

        shared[0] = false; // cleared by a writer that rolled back; the next writer sent no NOTIFY either
        tasks.get(0).beforeClaim(ClaimSchedule.MAX_IDLE_WAIT_MS);
        assertThat(wakes[0]).isEqualTo(1);
        assertThat(claims[0]).isEqualTo(before[0] + 1);

        tasks.get(1).beforeClaim(ClaimSchedule.MAX_IDLE_WAIT_MS + 10);
        tasks.get(2).beforeClaim(ClaimSchedule.MAX_IDLE_WAIT_MS + 10);
        assertThat(claims[1]).as("woken: arms and claims its share").isEqualTo(before[1] + 1);
        assertThat(tasks.get(1).state()).isEqualTo(State.SETTLING);
        assertThat(claims[2]).as("control: its look finds the flag armed again").isEqualTo(before[2]);
        assertThat(tasks.get(2).state()).isEqualTo(State.QUIET);
        assertThat(wakes[0]).as("an arming on a NOTIFY wakes nobody else").isEqualTo(1);
    }

    /** An arming that was to wake every task and failed still sends the NOTIFY when the next one succeeds. */
    @Test
    void aWakeForEveryTaskThatFailsIsSentByTheNextArming() throws Exception {
        FakeWakeupFlag failing = new FakeWakeupFlag() {
            @Override
            public boolean arm(boolean wakeEveryTask) {
                if (wakeEveryTask && wakes == 0 && arms == 1) {
                    arms++;
                    throw new IllegalStateException("test: the NOTIFY failed");
                }
                return super.arm(wakeEveryTask);
            }
        };
        WakeupCycle task = new WakeupCycle(failing, () -> { }, 0);
        task.afterClaim(0, false, 0);
        task.beforeClaim(0);
        task.afterClaim(0, false, 0);
        assertThat(task.state()).isEqualTo(State.QUIET);
        failing.armed = false; // cleared by a writer that rolled back
        try {
            task.beforeClaim(ClaimSchedule.MAX_IDLE_WAIT_MS);
        } catch (IllegalStateException expected) {
            // the pass fails and backs off
        }
        assertThat(failing.wakes).isZero();
        task.afterClaim(0, false, ClaimSchedule.MAX_IDLE_WAIT_MS + 5); // busy after the failure: the next claim arms
        assertThat(failing.wakes).as("the NOTIFY the failed arming owed").isEqualTo(1);
        task.notified();
        task.beforeClaim(ClaimSchedule.MAX_IDLE_WAIT_MS + 6);
        assertThat(failing.wakes).as("owed once").isEqualTo(1);
    }

    /**
     * A full NOTIFY queue: the wake for every task cannot go out (and the flag stays down). The arming does not
     * fail (the pass, and the claim it follows, go on); the wake stays owed to every arming until one sends it.
     */
    @Test
    void aWakeForEveryTaskTheNotifyQueueHasNoRoomForIsOwedUntilAnArmingSendsIt() throws Exception {
        FakeWakeupFlag flag = new FakeWakeupFlag();
        WakeupCycle task = new WakeupCycle(flag, () -> { }, 0);
        task.afterClaim(0, false, 0);
        task.beforeClaim(0);
        task.afterClaim(0, false, 0);
        assertThat(task.state()).isEqualTo(State.QUIET);
        flag.armed = false; // cleared by a writer whose notifying commit failed
        flag.queueFull = true;

        long t = ClaimSchedule.MAX_IDLE_WAIT_MS;
        int arms = flag.arms;
        task.beforeClaim(t); // the look: arms, the NOTIFY finds no room
        assertThat(flag.arms).isEqualTo(arms + 1);
        assertThat(task.state()).as("settles all the same").isEqualTo(State.SETTLING);
        task.afterClaim(0, false, t);
        task.beforeClaim(t + 1); // a pass later: rows arrived, the claim comes back short and arms again
        task.afterClaim(1, false, t + 1);
        assertThat(flag.arms).as("tried again").isEqualTo(arms + 2);
        assertThat(flag.wakes).isZero();

        flag.queueFull = false;
        task.beforeClaim(t + 2);
        task.afterClaim(1, false, t + 2);
        assertThat(flag.arms).isEqualTo(arms + 3);
        assertThat(flag.wakes).as("the wake owed since the look").isEqualTo(1);
        task.beforeClaim(t + 3);
        task.afterClaim(1, false, t + 3);
        assertThat(flag.arms).isEqualTo(arms + 4);
        assertThat(flag.wakes).as("owed once").isEqualTo(1);
    }

    @Test
    void anArmingThatFailsIsTriedAgainAtTheNextShortClaim() throws Exception {
        WakeupCycle failing = new WakeupCycle(new FakeWakeupFlag() {
            @Override
            public boolean arm(boolean wakeEveryTask) {
                arms++;
                if (arms == 1) {
                    throw new IllegalStateException("test: the arming's snapshot failed");
                }
                return true;
            }
        }, () -> { }, 0);
        try {
            failing.afterClaim(0, false, 0);
        } catch (IllegalStateException expected) {
            // the pass fails
        }
        assertThat(failing.state()).isEqualTo(State.BUSY);
        failing.afterClaim(0, false, 5);
        assertThat(failing.state()).isEqualTo(State.SETTLING);
    }
}
