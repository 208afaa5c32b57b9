package io.outboxrelay.connector;

/**
 * Whether a row still in flight when its task stops keeps the attempt its claim counted. Connect calls the
 * same {@code stop()} after a graceful stop and after the task failed on a record, and under
 * {@code errors.tolerance=none} it never tells the task which record failed: a converter or transform
 * error stops the task before the next poll, and a record the broker rejects (an invalid timestamp, a
 * message too large for the topic, a policy) fails it after a later one. Returning the attempt of such a row
 * would let it crash-loop the task forever; keeping the attempt of every row in flight would push healthy
 * rows towards poisoning at every stop while the broker is down (Connect's producer retries a send for
 * ever, so in an outage nothing fails, nothing is acknowledged, and the rows wait). So a row keeps its
 * attempt on evidence that it, not the broker, is what failed:
 * <ul>
 *   <li>its records are among those of the last poll(), which Connect may not have sent;</li>
 *   <li>records handed out with or after it were acknowledged: the producer delivered past it, as it does
 *       past a rejected record (in an outage nothing is acknowledged);</li>
 *   <li>it failed before (a retry, claimed alone) and no row was handed out after it, so nothing could be
 *       delivered past it: a rejected row in a share with no other traffic.</li>
 * </ul>
 * Every other row gets its attempt back. A row that keeps it is retried alone by the next incarnation, and
 * poisoned after {@code outbox.max.attempts}; its {@code last_error} says why it was counted.
 */
final class AttemptAtStop {
    private final long lastPoll;
    private final long ackedThroughPoll;
    private final long lastHandOutPoll;

    /**
     * @param lastPoll         the poll() that returned the last records (Connect has not polled since)
     * @param ackedThroughPoll the latest poll() any of whose records was acknowledged
     * @param lastHandOutPoll  the poll() that handed out the latest rows
     */
    AttemptAtStop(long lastPoll, long ackedThroughPoll, long lastHandOutPoll) {
        this.lastPoll = lastPoll;
        this.ackedThroughPoll = ackedThroughPoll;
        this.lastHandOutPoll = lastHandOutPoll;
    }

    OutboxStore.Release release(PendingRow row) {
        String kept = why(row);
        return new OutboxStore.Release(row.seq(), kept == null, 0, kept);
    }

    /** Why the row keeps its attempt, for its last_error; null when it gets it back. */
    String why(PendingRow row) {
        if (row.handedOutInPoll() == lastPoll) {
            return "the task stopped before Connect had sent every record of the last batch it was given, which"
                + " held this row: a converter or a transform may have failed on it (see the worker log)";
        }
        if (row.handedOutInPoll() <= ackedThroughPoll) {
            return "the task stopped with this row's records unacknowledged although records sent with or after them"
                + " were acknowledged: the broker most likely rejected them (see the worker log for the producer's"
                + " error, e.g. a timestamp, size or policy the topic refuses)";
        }
        if (row.row().attempts() > 1 && row.handedOutInPoll() == lastHandOutPoll) {
            return "the task stopped while this row, retried alone after an earlier failure, was the last one it had"
                + " sent, unacknowledged: the broker most likely rejected it again (see the worker log)";
        }
        return null;
    }
}
