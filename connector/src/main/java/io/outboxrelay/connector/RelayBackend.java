package io.outboxrelay.connector;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.PostgresDataSources;
import io.outboxrelay.common.PostgresListener;
import java.util.function.BooleanSupplier;

/**
 * What a relay task opens when it starts: the outbox table's store and, with LISTEN on, the session that
 * wakes it. In PostgreSQL, {@link #postgres}; unit tests of the relay loop open an in-memory one.
 */
interface RelayBackend extends AutoCloseable {
    OutboxStore store();

    /** The table's replay requests (docs/replay.md); none by default. */
    default ReplayStore replays() {
        return ReplayStore.NONE;
    }

    /** Whether the LISTEN session answers but its last echo did not come back ({@link PostgresListener}). */
    default boolean listenHearsNothing() {
        return false;
    }

    /** The LISTEN session, if there is one: the pacer turns it off while the task is busy. */
    default ClaimPacer.Listener listener() {
        return ClaimPacer.Listener.NONE;
    }

    @Override
    void close();

    /** Opens a backend for one incarnation of a task. */
    interface Factory {
        RelayBackend open(OutboxSourceTaskConfig config, String incarnation, Runnable onNotify, Runnable onListening);
    }

    /**
     * A pool of two sessions and, with LISTEN on, a LISTEN session (which sends its echo from the pool, proving that
     * NOTIFYs reach it: {@link PostgresListener}); every session announces the
     * connector, its table and its subscriptions in {@code application_name} ({@link SharedTableGuard}).
     */
    static RelayBackend postgres(OutboxSourceTaskConfig config, String incarnation, Runnable onNotify,
                                 Runnable onListening) {
        OutboxSourceConnectorConfig connector = config.connector();
        String owner = config.leaseOwner();
        SharedTableGuard tableShare = new SharedTableGuard(config.connectorName(), connector.quotedTable(),
            connector.subscriptions(), connector.recordShape(), connector.columns(), connector.strictOrdering());
        ConnectionSettings settings = ConnectionConfigKeys.settings(connector, tableShare.applicationName(owner));
        HikariDataSource pool = PostgresDataSources.pool(settings, 2, "outbox-relay-" + owner,
            JdbcOutboxStore.SESSION_SETUP);
        OutboxStore store = new JdbcOutboxStore(pool, connector.table(), connector.quotedTable(), connector.columns(),
            owner, incarnation, config.relayTaskCount(), config.relayTaskIndex(), connector.lease().toMillis(),
            connector.fannedChannel(), tableShare, new JdbcOutboxStore.ClaimLimits(connector.maxAttempts(),
                connector.maxRecordBytes(), connector.batchMaxBytes(), connector.strictOrdering()));
        ReplayStore replays = new JdbcReplayStore(pool, connector.table(), connector.quotedTable(), connector.columns(),
            store.owner(), connector.subscriptions().stream().map(Subscription::name).toList(),
            connector.lease().toMillis(), connector.maxRecordBytes());
        PostgresListener listener = null; // its thread started last: nothing after it throws and leaves it running
        if (connector.listenEnabled()) {
            listener = new PostgresListener(settings, connector.notifyChannel(), onNotify, onListening,
                "outbox-relay-listen-" + owner, pool);
            listener.start();
        }
        PostgresListener listening = listener;
        ClaimPacer.Listener controls = listening == null ? ClaimPacer.Listener.NONE : new ClaimPacer.Listener() {
            @Override
            public void listen(boolean on) {
                listening.listen(on);
            }

            @Override
            public boolean changing() {
                return listening.changing();
            }

            @Override
            public void checkAlive() {
                listening.checkAlive();
            }
        };
        return of(store, replays, controls, () -> {
            if (listening != null) {
                listening.close();
            }
            pool.close();
        }, () -> listening != null && listening.hearsNothing());
    }

    /** A backend of {@code store} whose {@link #close} runs {@code onClose}. */
    static RelayBackend of(OutboxStore store, Runnable onClose) {
        return of(store, ClaimPacer.Listener.NONE, onClose);
    }

    /** The same, whose {@link #listener} is {@code listener}. */
    static RelayBackend of(OutboxStore store, ClaimPacer.Listener listener, Runnable onClose) {
        return of(store, ReplayStore.NONE, listener, onClose);
    }

    /** The same, with the replay requests {@code replays}. */
    static RelayBackend of(OutboxStore store, ReplayStore replays, ClaimPacer.Listener listener, Runnable onClose) {
        return of(store, replays, listener, onClose, () -> false);
    }

    /** The same, whose LISTEN session {@code hearsNothing} tells of ({@link #listenHearsNothing}). */
    static RelayBackend of(OutboxStore store, ReplayStore replays, ClaimPacer.Listener listener, Runnable onClose,
                           BooleanSupplier hearsNothing) {
        return new RelayBackend() {
            @Override
            public OutboxStore store() {
                return store;
            }

            @Override
            public ReplayStore replays() {
                return replays;
            }

            @Override
            public ClaimPacer.Listener listener() {
                return listener;
            }

            @Override
            public boolean listenHearsNothing() {
                return hearsNothing.getAsBoolean();
            }

            @Override
            public void close() {
                onClose.run();
            }
        };
    }
}
