package io.outboxrelay.mentions;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.PostgresDataSources;
import io.outboxrelay.common.PostgresListener;

/**
 * The task's database resources: a small pool for the pass (reads, owed rows, marks; used from the
 * task thread, and by the LISTEN thread for its echo), the session holding the scan ({@link ScanLock})
 * and, unless {@code mentions.notify.channel} is empty, the LISTEN session.
 */
final class MentionDatabase implements AutoCloseable {
    static final int POOL_SIZE = 2;

    private final HikariDataSource pool;
    private final PostgresListener listener;
    private final ScanLock scan;

    private MentionDatabase(HikariDataSource pool, PostgresListener listener, ScanLock scan) {
        this.pool = pool;
        this.listener = listener;
        this.scan = scan;
    }

    /**
     * Opens the pool (lazily: a database that is down is reported by the first pass, not here) and
     * starts the listener; the production {@link MentionRecoveryTask.DatabaseOpener}.
     */
    static MentionRecoveryTask.OpenedDatabase open(MentionRecoveryConfig config, ScanTrigger trigger) {
        ConnectionSettings settings = config.connectionSettings();
        String taskId = config.taskId(null);
        HikariDataSource pool = PostgresDataSources.pool(settings, POOL_SIZE,
            MentionRecoveryConfig.APPLICATION_NAME + (taskId == null ? "" : "-" + taskId));
        // a NOTIFY asks for a pass, and so does LISTEN taking effect (at start, after the START pass may
        // already have read, and after a reconnect): notifications sent before it reached no one
        Runnable requestPass = () -> trigger.request(ScanTrigger.Kind.NOTIFY);
        PostgresListener listener = config.notifyChannel()
            .map(channel -> new PostgresListener(settings, channel, requestPass, requestPass,
                "outbox-relay-mentions-listener", pool))
            .orElse(null);
        if (listener != null) {
            listener.start();
        }
        ScanLock scan = new ScanLock(() -> PostgresDataSources.open(settings), MentionRecoveryConfig.APPLICATION_NAME
            + "-scan:" + config.connectorName() + (taskId == null ? "" : "/" + taskId));
        MentionDatabase db = new MentionDatabase(pool, listener, scan);
        return new MentionRecoveryTask.OpenedDatabase(new JdbcMentionStore(pool), db, scan::otherScanner,
            () -> listener != null && listener.hearsNothing());
    }

    /** Stops the listener first (so it requests no more passes), then closes the pool and the scan's session. */
    @Override
    public void close() {
        try {
            if (listener != null) {
                listener.close();
            }
            pool.close();
        } finally {
            scan.close();
        }
    }
}
