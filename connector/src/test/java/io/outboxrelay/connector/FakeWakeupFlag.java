package io.outboxrelay.connector;

import java.util.ArrayDeque;
import java.util.Deque;

/** The table's wake-up flag for unit tests: the writers in progress at an arming end when the test says so. */
class FakeWakeupFlag implements WakeupCycle.Flag {
    int arms;
    /** Armings that also sent a NOTIFY to every task. */
    int wakes;
    boolean armed;
    final Deque<Boolean> endings = new ArrayDeque<>();
    int inProgress;
    int looks;
    /** As WakeupArming while the NOTIFY queue is full: the flag stays down and no wake goes out. */
    boolean queueFull;

    @Override
    public boolean arm(boolean wakeEveryTask) {
        arms++;
        if (queueFull) {
            armed = false;
            return !wakeEveryTask;
        }
        if (wakeEveryTask) {
            wakes++;
        }
        armed = true;
        return true;
    }

    @Override
    public boolean someEnded() {
        looks++;
        boolean ended = !endings.isEmpty() && endings.poll();
        if (ended) {
            inProgress--;
        }
        return ended;
    }

    @Override
    public boolean waiting() {
        return inProgress > 0;
    }

    @Override
    public boolean armed() {
        return armed;
    }
}
