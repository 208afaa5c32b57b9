package io.outboxrelay.connector;

import java.sql.SQLException;

/**
 * The table's wake-up flag for unit tests: the count of its clears moves when the test says a writer took it
 * down, and an arming or a look fails when the test says so.
 */
class FakeWakeupFlag implements ClaimPacer.Flag {
    int arms;
    /** Armings tried, failed ones included. */
    int armAttempts;
    int looks;
    boolean armed;
    long clears;
    boolean counted = true;
    SQLException armFailure;
    SQLException lookFailure;

    @Override
    public long arm() throws SQLException {
        armAttempts++;
        if (armFailure != null) {
            throw armFailure;
        }
        arms++;
        armed = true;
        return clears;
    }

    @Override
    public boolean clearedSince(long token) throws SQLException {
        looks++;
        if (lookFailure != null) {
            throw lookFailure;
        }
        return counted ? clears != token || !armed : !armed; // as CountClears: the count moved, or the flag is down
    }

    @Override
    public boolean counted() {
        return counted;
    }

    /** A writer found the flag armed and took it down (whether its NOTIFY reaches the task is the test's to say). */
    void writerClears() {
        armed = false;
        clears++;
    }
}
