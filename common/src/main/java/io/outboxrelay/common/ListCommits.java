package io.outboxrelay.common;

import java.util.Map;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a source task may take for filtered at the start of a poll: records Connect will acknowledge only with some
 * later transaction, because a transform filtered every record of their list and Connect commits nothing for such a
 * list, so a task that waited for them could wait for ever (docs/exactly-once.md, 3.8).
 *
 * <p>With the task's own transactions ({@code transaction.boundary=connector}): whatever is unacknowledged from earlier
 * lists ({@link Settle#IN_FLIGHT_NOW}). Otherwise only on an exactly-once worker, which shows itself by calling
 * {@code SourceTask.commit()} on the poll thread right after each transaction it commits (Connect 4.3: after every
 * list with poll boundaries, an all-filtered one included; at the interval's end with interval boundaries; at a
 * pause), whatever {@code exactly.once.support} says. Such a commit covers every record sent before it, but a pause
 * can commit while the latest list is still being sent (a send retried), so it is taken to cover only the lists handed
 * out before the last poll, all of which Connect had sent before it polled again: what was already unacknowledged at
 * the last poll and still is after such a commit ({@link Settle#IN_FLIGHT_AT_LAST_POLL}). An at-least-once worker
 * calls {@code commit()} from its offset committer's thread, and on the task thread only for its final commit, after
 * which no poll comes. Never under {@code errors.tolerance=all}, where a null is a dropped record, not a filtered one.
 * That threading is Connect's behaviour, not its contract: it is trusted on the versions it was read in (3.9 to 4.3,
 * {@link #RUNTIMES_READ}); on another, lists filtered whole wait for a later transaction, as before, and the task says
 * so once.
 */
public final class ListCommits {
    /** What to settle as filtered at the start of a poll. */
    public enum Settle {
        /** Nothing. */
        NONE,
        /** Every record still unacknowledged from earlier lists. */
        IN_FLIGHT_NOW,
        /** The records the last poll found unacknowledged, where still unacknowledged. */
        IN_FLIGHT_AT_LAST_POLL
    }

    /** The Connect versions whose runtime was read for the threading above (bytecode of 3.9.2 and 4.3.1). */
    static final String RUNTIMES_READ = "3.9 to 4.3";
    private static final Logger log = LoggerFactory.getLogger(ListCommits.class);

    private final boolean ownTransactions;
    private final boolean nullIsFiltered;
    private volatile Thread pollThread;
    private boolean committedSincePoll;
    private boolean exactlyOnce;

    /** Whether the task's commits wait for the WAL flush: else a warning when it turns out to run exactly-once. */
    private final boolean durableCommits;
    private boolean toldOfAsynchronousCommits;

    private ListCommits(boolean ownTransactions, boolean nullIsFiltered, boolean durableCommits) {
        this.ownTransactions = ownTransactions;
        this.nullIsFiltered = nullIsFiltered;
        this.durableCommits = durableCommits;
    }

    public static ListCommits of(SourceTaskContext context, Map<String, String> props) {
        return of(context, props, AppInfoParser.getVersion());
    }

    static ListCommits of(SourceTaskContext context, Map<String, String> props, String connectVersion) {
        boolean read = runtimeRead(connectVersion);
        if (!read) {
            log.info("Kafka {}: an exactly-once worker's commit() is trusted to end a transaction on the Connect"
                + " versions whose runtime was read for it ({}); here a list whose every record a transform filtered"
                + " is settled only with transaction.boundary=connector, and otherwise waits for a later transaction",
                connectVersion, RUNTIMES_READ);
        }
        return new ListCommits(context != null && context.transactionContext() != null,
            !ConnectKeys.toleratesAllErrors(props) && read, !"off".equalsIgnoreCase(ConnectionConfigKeys.synchronousCommit(props)));
    }

    /** Whether {@code version} (major.minor...) lies in {@link #RUNTIMES_READ}. */
    static boolean runtimeRead(String version) {
        String[] parts = version == null ? new String[0] : version.split("[.-]");
        try {
            int major = Integer.parseInt(parts[0]);
            int minor = Integer.parseInt(parts[1]);
            return major == 3 && minor >= 9 || major == 4 && minor <= 3;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** From {@code SourceTask.commit()}, on whichever thread Connect calls it. */
    public void committed() {
        if (Thread.currentThread() == pollThread) {
            committedSincePoll = true; // only the poll thread reads and writes it
            exactlyOnce = true;
        }
    }

    /** Task thread, at the start of a poll, before it hands out anything. */
    public Settle atPoll() {
        pollThread = Thread.currentThread();
        boolean committed = committedSincePoll;
        committedSincePoll = false;
        if (committed && !durableCommits && !toldOfAsynchronousCommits) {
            // a poll after a commit on the poll thread: an exactly-once worker (an at-least-once one calls it there
            // only for its final commit, after which no poll comes)
            toldOfAsynchronousCommits = true;
            log.warn("This task runs in Connect's transactions (exactly-once) with connection.synchronous.commit=off:"
                + " a PostgreSQL crash can undo its last stamps after its committed offsets stopped naming their rows,"
                + " and those rows are then produced again, duplicates a read_committed consumer sees. Set"
                + " connection.synchronous.commit=on (what it is, unset, with exactly.once.support=required)");
        }
        if (ownTransactions) {
            return Settle.IN_FLIGHT_NOW;
        }
        return nullIsFiltered && committed ? Settle.IN_FLIGHT_AT_LAST_POLL : Settle.NONE;
    }

    /** Whether this task logged that it runs exactly-once with asynchronous commits (tests). */
    boolean toldOfAsynchronousCommits() {
        return toldOfAsynchronousCommits;
    }

    /** Task thread: whether to note, at this poll, what is unacknowledged (an exactly-once worker seen, no own transactions). */
    public boolean notesInFlight() {
        return !ownTransactions && nullIsFiltered && exactlyOnce;
    }
}
