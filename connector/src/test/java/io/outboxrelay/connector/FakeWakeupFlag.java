package io.outboxrelay.connector;

import java.sql.SQLException;

/** The table's wake-up flag for unit tests: an arming fails when the test says so. */
class FakeWakeupFlag implements ClaimPacer.Flag {
    int arms;
    /** Armings tried, failed ones included. */
    int armAttempts;
    boolean armed;
    SQLException armFailure;

    @Override
    public void arm() throws SQLException {
        armAttempts++;
        if (armFailure != null) {
            throw armFailure;
        }
        arms++;
        armed = true;
    }

    /** A writer found the flag armed and took it down (whether its NOTIFY reaches the task is the test's to say). */
    void writerClears() {
        armed = false;
    }
}
