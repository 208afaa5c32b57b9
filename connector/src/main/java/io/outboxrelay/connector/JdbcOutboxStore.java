package io.outboxrelay.connector;

import io.outboxrelay.common.DatabaseText;
import io.outboxrelay.common.Json;
import io.outboxrelay.common.NamedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import javax.sql.DataSource;

/**
 * {@link OutboxStore} on PostgreSQL: the named statements of {@code outbox-relay.sql}, bound by name. One
 * instance per task incarnation; its lease owner names the connector, the task and the incarnation
 * ({@code <connector>-<task>#<incarnation>}), so that a task restarted while its previous incarnation is
 * still stopping can neither have its leases released by that one nor release them.
 */
final class JdbcOutboxStore implements OutboxStore {
    /** NOTIFY payloads must stay under 8000 bytes. */
    static final int RECEIPT_PAYLOAD_MAX_BYTES = 7_999;
    /** A poisoned row's type and subject, for its log line and poison record, are cut at this many characters. */
    static final int POISONED_TEXT_MAX_CHARS = 1_000;
    /** The backlog probe counts this many rows at most; beyond, it reports PostgreSQL's estimate. */
    static final int BACKLOG_EXACT_ROWS = 100_000;
    /**
     * The recovery of unknown leases reads this many rows from the head of the line: far more than every
     * task's rows in flight at the largest settings (tasks x outbox.batch.max.size x in-flight batches).
     */
    static final int UNKNOWN_LEASE_SCAN_ROWS = 100_000;

    /**
     * What a claim may read: rows whose text passes {@code maxRecordBytes} or that are claimed more than
     * {@code maxAttempts} times come back unread, and a claim reads at most {@code maxClaimBytes} (or its first
     * row alone when that is larger). With {@code strictOrder} it reads only rows that head their subject's line
     * (outbox.ordering=strict, docs/ordering.md).
     */
    record ClaimLimits(int maxAttempts, int maxRecordBytes, long maxClaimBytes, boolean strictOrder) {
        static final ClaimLimits DEFAULT = new ClaimLimits(5, OutboxSourceConnectorConfig.DEFAULT_MAX_RECORD_BYTES,
            OutboxSourceConnectorConfig.DEFAULT_BATCH_MAX_BYTES);

        ClaimLimits(int maxAttempts, int maxRecordBytes, long maxClaimBytes) {
            this(maxAttempts, maxRecordBytes, maxClaimBytes, false);
        }
    }

    /** The relay's named statements; NotifyQueue and SharedTableGuard read theirs here too. */
    static final NamedSql SQL = NamedSql.load(JdbcOutboxStore.class, "outbox-relay.sql");
    /** What every session of a relay task runs when it opens. */
    static final String SESSION_SETUP = SQL.get("SessionSetup");

    private final DataSource dataSource;
    private final String table;
    private final String quotedTable;
    private final String taskOwner;
    private final String owner;
    private final SubjectShare share;
    private final long leaseMs;
    private final String fannedChannel;
    private final SharedTableGuard tableShare;
    private final ClaimLimits limits;
    private final ClaimedRowReader reader;
    private final ReceiptsDropped receiptsDropped = new ReceiptsDropped(System::nanoTime);
    private final NamedSql.Bindable passSql;
    private final NamedSql.Bindable releaseSql;
    private final NamedSql.Bindable returnAttemptSql;
    private final NamedSql.Bindable recoverableSql;
    private final NamedSql.Bindable stampRecoveredSql;
    private final NamedSql.Bindable receiptsSql;
    private final NamedSql.Bindable poisonSql;
    private final NamedSql.Bindable extendSql;
    private final NamedSql.Bindable wakeSql;
    private final NamedSql.Bindable takeBackUnknownSql;
    private final NamedSql.Bindable takeoverHorizonSql;
    private final NamedSql.Bindable backlogSql;
    private final NamedSql.Bindable retainedSql;
    /**
     * While rows are so large that the byte budget cuts claims, the next claim asks for one row more than the
     * last one leased (the one more tells whether rows wait): asking for all the claim size allows would make
     * the database read and convert rows only to leave them in line.
     */
    private int rowsThatFit = Integer.MAX_VALUE;
    /** Leases of earlier incarnations that end by then were taken before this one started (server clock). */
    private Timestamp takeoverUntil;

    /**
     * @param table       the table as configured ({@code outbox.table}); its flag is {@code <table>_wakeup}
     * @param taskOwner   {@code <connector>-<task id>}, the same for every incarnation of the task
     * @param incarnation tells this start of the task from earlier ones; lowercase hex
     * @param tableShare  what this connector announces and checks about the table's other connectors
     */
    JdbcOutboxStore(DataSource dataSource, String table, String quotedTable, String taskOwner, String incarnation,
                    int taskCount, int taskIndex, long leaseMs, String fannedChannel, SharedTableGuard tableShare) {
        this(dataSource, table, quotedTable, OutboxColumns.DEFAULT, taskOwner, incarnation, taskCount, taskIndex, leaseMs,
            fannedChannel, tableShare, ClaimLimits.DEFAULT);
    }

    /**
     * @param columns the columns of the event's fields, spliced into the statements once, here
     * @param limits  what a claim may read
     */
    JdbcOutboxStore(DataSource dataSource, String table, String quotedTable, OutboxColumns columns, String taskOwner,
                    String incarnation, int taskCount, int taskIndex, long leaseMs, String fannedChannel,
                    SharedTableGuard tableShare, ClaimLimits limits) {
        if (!incarnation.matches("[0-9a-f]+")) {
            throw new IllegalArgumentException("incarnation must be lowercase hex: " + incarnation);
        }
        this.dataSource = dataSource;
        this.table = table;
        this.quotedTable = quotedTable;
        this.taskOwner = taskOwner;
        this.owner = taskOwner + "#" + incarnation;
        this.share = SubjectShare.of(taskIndex, taskCount);
        this.leaseMs = leaseMs;
        this.fannedChannel = fannedChannel;
        this.tableShare = tableShare;
        this.limits = limits;
        this.reader = new ClaimedRowReader(limits.maxRecordBytes());
        this.passSql = claimSql(quotedTable, columns, limits.strictOrder());
        this.releaseSql = SQL.bindable("ReleaseLeases", quotedTable, columns::expand);
        this.returnAttemptSql = SQL.bindable("ReturnAttemptKeepLease", quotedTable, columns::expand);
        this.recoverableSql = SQL.bindable("RecoverableRows", quotedTable, columns::expand);
        this.stampRecoveredSql = SQL.bindable("StampRecovered", quotedTable, columns::expand);
        this.receiptsSql = SQL.bindable("NotifyReceipts", quotedTable, columns::expand);
        this.poisonSql = SQL.bindable("PoisonRows", quotedTable, sql -> columns.expand(DatabaseText.expand(sql)));
        this.extendSql = SQL.bindable("ExtendLeases", quotedTable, columns::expand);
        this.wakeSql = SQL.bindable("WakeTasks", quotedTable, columns::expand);
        this.takeBackUnknownSql = SQL.bindable("ReleaseUnknownLeases", quotedTable, columns::expand);
        this.takeoverHorizonSql = SQL.bindable("TakeoverHorizon", quotedTable, columns::expand);
        this.backlogSql = SQL.bindable("Backlog", quotedTable, columns::expand);
        this.retainedSql = SQL.bindable("DeleteRetained", quotedTable, columns::expand);
    }

    /** ClaimRows for this table and columns; with {@code strict}, StrictOrderProbe in its place (docs/ordering.md). */
    static NamedSql.Bindable claimSql(String quotedTable, OutboxColumns columns, boolean strict) {
        String probe = strict ? SQL.forTable("StrictOrderProbe", quotedTable) : "";
        return SQL.bindable("ClaimRows", quotedTable,
            sql -> columns.expand(DatabaseText.expand(sql.replace("/*strict_order*/", probe))));
    }

    @Override
    public String owner() {
        return owner;
    }

    /**
     * The claim as the task sees it, after learning from it how many rows fit the byte budget. A claim that
     * asked for fewer rows than the task wanted and found all of them says more may wait, as a full one does.
     */
    private Claim sized(List<ClaimedRow> rows, int found, long bytes, int asked, int limit) {
        // rows left in line with half the budget read: cut by bytes (a retried row ends a batch too, rarely so big)
        boolean cutByBytes = rows.size() < found && bytes > limits.maxClaimBytes() / 2;
        rowsThatFit = cutByBytes ? rows.size() + 1 : Integer.MAX_VALUE;
        return new Claim(rows, asked < limit && found == asked && !cutByBytes ? limit : found);
    }

    /** How many rows the next claim asks for when the task wants {@code limit}. */
    int nextClaimAsksFor(int limit) {
        return Math.min(limit, rowsThatFit);
    }

    /**
     * The pass's one statement, with the write receipts NOTIFYed in its transaction: a receipt is sent exactly
     * when the stamp is visible. When the server's NOTIFY queue is full (a session that LISTENs stays in a
     * transaction and stops the queue from draining), that statement's commit fails and changes nothing; it
     * runs again at once, without the receipts unless moving the queue's tail made room: writers read
     * {@code fanned_out_at} instead, as for a lost notification. Without this, the task would fail after Kafka
     * acknowledged the rows and deliver them again after a restart, for as long as the queue is full.
     */
    @Override
    public PassResult pass(Pass pass) throws SQLException {
        Object[] receipts = receiptsOf(pass.stamps());
        if (receipts.length == 0) {
            return run(pass, receipts);
        }
        // the queue was full at the last stamp: look first rather than run a statement bound to fail
        if (receiptsDropped.dropping()) {
            double usage = queueUsage();
            if (!NotifyQueue.hasRoom(usage)) {
                return runWithoutReceipts(pass, usage, null);
            }
        }
        SQLException full;
        try {
            return runWithReceipts(pass, receipts);
        } catch (SQLException e) {
            if (!NotifyQueue.full(e)) {
                throw e;
            }
            full = e;
        }
        // the session that held the queue back may have ended: moving the tail then makes room
        double usage = queueUsage();
        if (usage != NotifyQueue.UNKNOWN && NotifyQueue.hasRoom(usage)) {
            try {
                return runWithReceipts(pass, receipts);
            } catch (SQLException e) {
                if (!NotifyQueue.full(e)) {
                    e.addSuppressed(full);
                    throw e;
                }
            }
        }
        return runWithoutReceipts(pass, usage, full);
    }

    private PassResult runWithReceipts(Pass pass, Object[] receipts) throws SQLException {
        PassResult result = run(pass, receipts);
        receiptsDropped.sent();
        return result;
    }

    /** @param full the error of the statement with the receipts, null when the queue was found full before it */
    private PassResult runWithoutReceipts(Pass pass, double usage, SQLException full) throws SQLException {
        PassResult result;
        try {
            result = run(pass, new Object[0]);
        } catch (SQLException e) {
            if (full != null) {
                e.addSuppressed(full);
            }
            throw e;
        }
        receiptsDropped.dropped(pass.stamps().size(), usage, full);
        return result;
    }

    private double queueUsage() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return NotifyQueue.advanceTail(c);
        }
    }

    /**
     * {@code rows} in ascending seq order: the statements find a row's values in their lists by a binary search over
     * the seqs (outbox-relay.sql, SessionSetup).
     */
    static <T> List<T> bySeq(List<T> rows, ToLongFunction<T> seq) {
        return rows.stream().sorted(Comparator.comparingLong(seq)).toList();
    }

    /** The pass's statement with these receipt chunks (none: no NOTIFY). */
    PassResult run(Pass pass, Object[] receipts) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            if (takeoverUntil == null) {
                takeoverUntil = takeoverHorizon(c);
            }
            try (PreparedStatement ps = c.prepareStatement(passSql.sql())) {
                List<Stamp> stamps = bySeq(pass.stamps(), Stamp::seq);
                passSql.set(ps, "stamp_seqs", c.createArrayOf("bigint", stamps.stream().map(Stamp::seq).toArray()));
                passSql.set(ps, "stamp_fanouts", c.createArrayOf("text", stamps.stream().map(Stamp::fanout).toArray()));
                passSql.set(ps, "channel", fannedChannel);
                passSql.set(ps, "receipts", c.createArrayOf("text", receipts));
                passSql.set(ps, "takeover_until", takeoverUntil);
                passSql.set(ps, "owner", owner);
                passSql.set(ps, "task", taskOwner);
                passSql.set(ps, "share_low", share.low());
                passSql.set(ps, "share_high", share.high());
                int asked = pass.limit() == 0 ? 0 : nextClaimAsksFor(pass.limit());
                passSql.set(ps, "limit", asked);
                passSql.set(ps, "lease_ms", leaseMs);
                passSql.set(ps, "max_attempts", limits.maxAttempts());
                passSql.set(ps, "max_record_bytes", limits.maxRecordBytes());
                passSql.set(ps, "max_claim_bytes", limits.maxClaimBytes());
                try (ResultSet rs = ps.executeQuery()) {
                    return read(rs, asked, pass.limit());
                }
            }
        }
    }

    /** Columns 1-15 are a claimed row (ClaimedRowReader), 16-17 the statement's results. */
    private PassResult read(ResultSet rs, int asked, int limit) throws SQLException {
        rs.next(); // always one row: the statement's results, and the first claimed row if any
        int stamped = rs.getInt(16);
        List<ClaimedRow> rows = new ArrayList<>(asked);
        int found = 0;
        long bytes = 0;
        if (rs.getObject(1) != null) {
            do {
                ClaimedRow row = reader.read(rs);
                rows.add(row);
                bytes += row.rowBytes();
                found = rs.getInt(12);
            } while (rs.next());
        }
        Claim claim = rows.isEmpty() ? Claim.NONE : sized(rows, found, bytes, asked, limit);
        return new PassResult(stamped, claim);
    }

    private Timestamp takeoverHorizon(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(takeoverHorizonSql.sql())) {
            takeoverHorizonSql.set(ps, "lease_ms", leaseMs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getTimestamp(1);
            }
        }
    }

    /** The rows' event ids, comma-joined in chunks that each fit one NOTIFY payload; none without receipts. */
    private Object[] receiptsOf(List<Stamp> rows) {
        if (fannedChannel.isEmpty()) {
            return new Object[0];
        }
        return receiptChunks(rows.stream().map(Stamp::id).toList()).toArray();
    }

    /**
     * {@code ids} comma-joined in chunks of at most {@link #RECEIPT_PAYLOAD_MAX_BYTES} UTF-8 bytes (a mapped
     * {@code outbox.column.id} may be longer than a UUID). An id too long for a payload of its own gets no
     * receipt: its writer falls back to reading {@code fanned_out_at}, as for a lost notification.
     */
    static List<String> receiptChunks(List<String> ids) {
        List<String> chunks = new ArrayList<>();
        StringBuilder chunk = new StringBuilder();
        int bytes = 0;
        boolean empty = true;
        for (String id : ids) {
            int length = Json.utf8Length(id);
            if (length > RECEIPT_PAYLOAD_MAX_BYTES) {
                continue;
            }
            if (!empty && bytes + 1 + length > RECEIPT_PAYLOAD_MAX_BYTES) {
                chunks.add(chunk.toString());
                chunk.setLength(0);
                bytes = 0;
                empty = true;
            }
            if (!empty) {
                chunk.append(',');
                bytes++;
            }
            chunk.append(id);
            bytes += length;
            empty = false;
        }
        if (!empty) {
            chunks.add(chunk.toString());
        }
        return chunks;
    }

    @Override
    public void release(List<Release> unsorted) throws SQLException {
        List<Release> rows = bySeq(unsorted, Release::seq);
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(releaseSql.sql())) {
            releaseSql.set(ps, "seqs", c.createArrayOf("bigint", rows.stream().map(Release::seq).toArray()));
            releaseSql.set(ps, "givebacks", c.createArrayOf("int4",
                rows.stream().map(r -> r.returnAttempt() ? 1 : 0).toArray()));
            releaseSql.set(ps, "delays_ms", c.createArrayOf("bigint", rows.stream().map(Release::delayMs).toArray()));
            releaseSql.set(ps, "errors", c.createArrayOf("text", rows.stream().map(Release::error).toArray()));
            releaseSql.set(ps, "owner", owner);
            ps.executeUpdate();
        }
    }

    @Override
    public void returnAttempts(Collection<Long> seqs) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(returnAttemptSql.sql())) {
            returnAttemptSql.set(ps, "seqs", c.createArrayOf("bigint", seqs.toArray()));
            returnAttemptSql.set(ps, "owner", owner);
            ps.executeUpdate();
        }
    }

    /**
     * Reads the named rows of this task's share, stamps those still leased by {@code owner}, and sends their
     * receipts, in one transaction. When the server's NOTIFY queue is full the same runs again without the
     * receipts (writers then read {@code fanned_out_at}, as for a lost notification).
     */
    @Override
    public Recovered stampRecovered(String owner, long[] seqs, Function<String, String> fanoutOfType)
        throws SQLException {
        try {
            return stampRecovered(owner, seqs, fanoutOfType, true);
        } catch (SQLException e) {
            if (!NotifyQueue.full(e)) {
                throw e;
            }
            Recovered r = stampRecovered(owner, seqs, fanoutOfType, false);
            receiptsDropped.dropped(r.stamped(), NotifyQueue.UNKNOWN, e);
            return r;
        }
    }

    private Recovered stampRecovered(String owner, long[] seqs, Function<String, String> fanoutOfType,
                                     boolean receipts) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                List<Stamp> recoverable = new ArrayList<>();
                List<Long> notLeased = new ArrayList<>();
                int alreadyStamped = 0;
                try (PreparedStatement ps = c.prepareStatement(recoverableSql.sql())) {
                    recoverableSql.set(ps, "seqs", c.createArrayOf("bigint", Arrays.stream(seqs).boxed().toArray()));
                    recoverableSql.set(ps, "owner", owner);
                    recoverableSql.set(ps, "share_low", share.low());
                    recoverableSql.set(ps, "share_high", share.high());
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            if (rs.getBoolean(5)) {
                                recoverable.add(new Stamp(rs.getLong(1), fanoutOfType.apply(rs.getString(2)), rs.getString(3)));
                            } else if (rs.getBoolean(4)) {
                                alreadyStamped++;
                            } else {
                                notLeased.add(rs.getLong(1));
                            }
                        }
                    }
                }
                List<String> ids = new ArrayList<>(recoverable.size());
                if (!recoverable.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(stampRecoveredSql.sql())) {
                        List<Stamp> sorted = bySeq(recoverable, Stamp::seq);
                        stampRecoveredSql.set(ps, "seqs", c.createArrayOf("bigint", sorted.stream().map(Stamp::seq).toArray()));
                        stampRecoveredSql.set(ps, "fanouts", c.createArrayOf("text", sorted.stream().map(Stamp::fanout).toArray()));
                        stampRecoveredSql.set(ps, "owner", owner);
                        try (ResultSet rs = ps.executeQuery()) {
                            while (rs.next()) {
                                ids.add(rs.getString(1));
                            }
                        }
                    }
                }
                if (receipts && !ids.isEmpty() && !fannedChannel.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(receiptsSql.sql())) {
                        receiptsSql.set(ps, "channel", fannedChannel);
                        receiptsSql.set(ps, "receipts", c.createArrayOf("text", receiptChunks(ids).toArray()));
                        ps.executeQuery().close();
                    }
                }
                c.commit();
                return new Recovered(ids.size(), alreadyStamped + recoverable.size() - ids.size(), notLeased);
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    @Override
    public List<PoisonedRow> poison(List<Poison> unsorted) throws SQLException {
        List<Poison> rows = bySeq(unsorted, Poison::seq);
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(poisonSql.sql())) {
            poisonSql.set(ps, "seqs", c.createArrayOf("bigint", rows.stream().map(Poison::seq).toArray()));
            poisonSql.set(ps, "reasons", c.createArrayOf("text", rows.stream().map(Poison::reason).toArray()));
            poisonSql.set(ps, "attempts", c.createArrayOf("integer", rows.stream().map(Poison::attempts).toArray()));
            poisonSql.set(ps, "text_max", POISONED_TEXT_MAX_CHARS);
            poisonSql.set(ps, "owner", owner);
            List<PoisonedRow> out = new ArrayList<>(rows.size());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    // read as the claim reads: a row poisoned because its text is not UTF-8 must not fail here
                    String raw = rs.getString(9);
                    Timestamp occurredAt = rs.getTimestamp(6);
                    out.add(new PoisonedRow(rs.getLong(1), DatabaseText.lenient(rs.getBytes(2), raw),
                        DatabaseText.lenient(rs.getBytes(3), raw), DatabaseText.lenient(rs.getBytes(4), raw),
                        rs.getInt(5), occurredAt == null ? 0 : occurredAt.getTime(), rs.getTimestamp(7).getTime(),
                        DatabaseText.lenient(rs.getBytes(8), raw)));
                }
            }
            return out;
        }
    }

    @Override
    public void wake(String channel) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(wakeSql.sql())) {
            wakeSql.set(ps, "channel", channel);
            wakeSql.set(ps, "flag", WakeupObjects.flagName(table));
            wakeSql.set(ps, "clears", WakeupObjects.clearsName(table));
            ps.execute();
        }
    }

    @Override
    public void extend(Collection<Long> seqs) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(extendSql.sql())) {
            extendSql.set(ps, "lease_ms", leaseMs);
            extendSql.set(ps, "seqs", c.createArrayOf("bigint", seqs.toArray()));
            extendSql.set(ps, "owner", owner);
            ps.executeUpdate();
        }
    }

    @Override
    public List<TakenBack> takeBackUnknownLeases(Collection<Long> held, Collection<Long> keepAttempt)
        throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(takeBackUnknownSql.sql())) {
            takeBackUnknownSql.set(ps, "keep_attempt", c.createArrayOf("bigint", keepAttempt.toArray()));
            takeBackUnknownSql.set(ps, "owner", owner);
            takeBackUnknownSql.set(ps, "held", c.createArrayOf("bigint", held.toArray()));
            takeBackUnknownSql.set(ps, "examine", UNKNOWN_LEASE_SCAN_ROWS);
            List<TakenBack> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new TakenBack(rs.getLong(1), rs.getInt(2)));
                }
            }
            return out;
        }
    }

    @Override
    public Backlog backlog() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(backlogSql.sql())) {
            backlogSql.set(ps, "exact_max", BACKLOG_EXACT_ROWS);
            backlogSql.set(ps, "table", quotedTable);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Backlog(rs.getLong(1), rs.getLong(2));
            }
        }
    }

    @Override
    public int deleteRetained(long retentionMs, int limit) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(retainedSql.sql())) {
            retainedSql.set(ps, "retention_ms", retentionMs);
            retainedSql.set(ps, "limit", limit);
            return ps.executeUpdate();
        }
    }

    @Override
    public PartitionUpkeep partitions() throws SQLException {
        return PartitionUpkeep.of(dataSource, table);
    }

    @Override
    public String tableShareConflict() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return tableShare.conflict(c);
        }
    }

    @Override
    public ClaimPacer.Flag wakeupFlag() throws SQLException {
        return WakeupFlag.of(dataSource, table);
    }
}
