package io.outboxrelay.connector;

import io.outboxrelay.common.PostgresErrorClassifier;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says when stamps go out without their write receipts because the server's NOTIFY queue is full: a
 * warning at the first such stamp and then at most once a minute while it lasts, with how many rows went
 * without one, and a line when receipts are sent again.
 */
final class ReceiptsDropped {
    private static final Logger log = LoggerFactory.getLogger(ReceiptsDropped.class);
    static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final LongSupplier nanos;
    private boolean dropping;
    private long lastWarnNanos;
    private long rowsSinceWarn;

    ReceiptsDropped(LongSupplier nanos) {
        this.nanos = nanos;
    }

    /** Whether the last stamp with receipts went out without them. */
    boolean dropping() {
        return dropping;
    }

    /**
     * {@code rows} were stamped without their receipts after the stamp with them failed with {@code e} (null:
     * the queue was found full before it); the queue was {@code usage} full (0 to 1).
     */
    void dropped(int rows, double usage, SQLException e) {
        rowsSinceWarn += rows;
        long now = nanos.getAsLong();
        if (dropping && now - lastWarnNanos < WARN_EVERY_NANOS) {
            return;
        }
        log.warn("PostgreSQL's NOTIFY queue is full ({}{}): stamped {} row(s) without their write receipts{};"
                + " writers awaiting them read fanned_out_at instead. {}",
            e == null ? "" : PostgresErrorClassifier.oneLine(e.getMessage()) + ", SQLState " + e.getSQLState() + "; ",
            NotifyQueue.describe(usage), rowsSinceWarn, dropping ? " since the last warning" : "", NotifyQueue.WHAT_TO_DO);
        dropping = true;
        lastWarnNanos = now;
        rowsSinceWarn = 0;
    }

    /** A stamp went out with its receipts. */
    void sent() {
        if (!dropping) {
            return;
        }
        log.info("Write receipts are sent again: the NOTIFY queue has room ({} more row(s) went without one since"
            + " the last warning)", rowsSinceWarn);
        dropping = false;
        rowsSinceWarn = 0;
    }
}
