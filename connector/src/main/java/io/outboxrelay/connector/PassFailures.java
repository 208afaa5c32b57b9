package io.outboxrelay.connector;

import io.outboxrelay.common.Backoff;
import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.DriverPropertyGuard;
import io.outboxrelay.common.PostgresErrorClassifier;
import java.sql.SQLException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a failed pass means: an error no retry can fix fails the task, naming it; a database the task never
 * reached fails it once {@code connection.startup.retry.ms} has passed; anything else backs the task off,
 * doubling from {@code outbox.backoff.initial.ms} to {@code outbox.backoff.max.ms}.
 */
final class PassFailures {
    private static final Logger log = LoggerFactory.getLogger(PassFailures.class);

    private final OutboxSourceConnectorConfig config;
    private final Backoff backoff;
    private final long startedAt;
    private boolean reachedDatabase;

    PassFailures(OutboxSourceConnectorConfig config, Backoff backoff, long startedAt) {
        this.config = config;
        this.backoff = backoff;
        this.startedAt = startedAt;
    }

    /** A pass worked: the next failure backs off from the start again. */
    void passed() {
        backoff.reset();
        reachedDatabase = true;
    }

    /** Whether the last pass failed (what a failure may have lost is then recovered first). */
    boolean failing() {
        return backoff.failures() > 0;
    }

    /**
     * @return how long to back off after {@code e}
     * @throws ConnectException when no retry can fix it
     */
    long backOffMs(SQLException e, long now) {
        RuntimeException classified = PostgresErrorClassifier.classify(
            "Outbox relay on table " + config.quotedTable(), e);
        if (!(classified instanceof RetriableException)) {
            throw classified;
        }
        long sinceStart = now - startedAt;
        if (!reachedDatabase && sinceStart > config.getLong(ConnectionConfigKeys.STARTUP_RETRY_MS)) {
            throw new ConnectException("Cannot reach PostgreSQL at "
                + DriverPropertyGuard.redact(config.getString(ConnectionConfigKeys.URL))
                + " since the task started " + sinceStart / 1000 + " s ago: "
                + PostgresErrorClassifier.oneLine(e.getMessage()) + " (SQLState " + e.getSQLState()
                + "). Check connection.url, the network and that the server accepts connections, then restart"
                + " the task.", e);
        }
        long delay = backoff.nextDelayMs();
        log.warn("{}; backing off {} ms (failure {} in a row)", classified.getMessage(), delay, backoff.failures());
        return delay;
    }
}
