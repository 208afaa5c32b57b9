package io.outboxrelay.connector;

import io.outboxrelay.common.NamedSql;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One rule for connectors that share an outbox table: they all serve the same subscriptions. A row
 * carries one {@code fanned_out_at}, stamped by whichever connector claimed it, for the records of that
 * connector's subscriptions only; a connector with other subscriptions would take rows its neighbour's
 * subscribers never get.
 *
 * <p>Each relay session announces what it relays in its {@code application_name}:
 * {@code outbox-relay:<connector>-<task>@<table>.<records>.<connector>}, three fingerprints of six hex
 * digits: of the table, of what decides the records (subscriptions, the record shape and the columns the
 * event's fields are read from), and of the full
 * connector name, which tells a connector's own sessions apart even when its name is cut to fit the 63
 * bytes PostgreSQL keeps (the name part is ASCII: PostgreSQL would escape other characters).
 * {@code validate()} and each relay task, before its first claim, look at the sessions of the database
 * (pg_stat_activity, whose application names any role may read) for a running connector on the same table
 * with other subscriptions. Tables are told apart by {@code outbox.table} as configured, an unqualified
 * name standing for {@code public.<name>}. The rule is checked among running connectors: a connector
 * whose tasks are all stopped has no sessions and is not seen.
 */
final class SharedTableGuard {
    static final String PREFIX = "outbox-relay:";
    /** PostgreSQL keeps the first 63 bytes of an application name. */
    private static final int MAX_APPLICATION_NAME = 63;
    /** Bytes left for the task's name: the prefix and the fingerprints ("@" 6 "." 6 "." 6) take the rest. */
    private static final int OWNER_ROOM = MAX_APPLICATION_NAME - PREFIX.length() - 21;
    private static final Pattern ANNOUNCED = Pattern.compile(
        Pattern.quote(PREFIX) + "(.*)@([0-9a-f]{6})\\.([0-9a-f]{6})\\.([0-9a-f]{6})");

    private final String connector;
    private final String tableFingerprint;
    private final String fingerprint;
    private final String connectorFingerprint;

    /** @param quotedTable the table as the relay quotes it ({@code "events"}, {@code "app"."events"}) */
    SharedTableGuard(String connector, String quotedTable, List<Subscription> subscriptions, RecordShape shape) {
        this(connector, quotedTable, subscriptions, shape, OutboxColumns.DEFAULT);
    }

    SharedTableGuard(String connector, String quotedTable, List<Subscription> subscriptions, RecordShape shape,
                     OutboxColumns columns) {
        this(connector, quotedTable, subscriptions, shape, columns, false);
    }

    /**
     * @param strictOrder outbox.ordering=strict, which every connector on the table must share: a best-effort one
     *                    would send a subject's later rows while a strict one's row of it backs off
     */
    SharedTableGuard(String connector, String quotedTable, List<Subscription> subscriptions, RecordShape shape,
                     OutboxColumns columns, boolean strictOrder) {
        this.connector = connector;
        this.tableFingerprint = sha256Hex(quotedTable.contains("\".\"") ? quotedTable : "\"public\"." + quotedTable);
        this.fingerprint = fingerprint(subscriptions, shape, columns, strictOrder);
        this.connectorFingerprint = sha256Hex(connector);
    }

    /**
     * Six hex digits over everything that decides a row's records: each subscription's name, topic,
     * event-type globs and coalescing, in name order, the record shape, and the columns the fields are read
     * from (another subject column makes other keys; the default columns add nothing, so the fingerprint
     * of a connector that maps none is the one of versions without the mapping).
     */
    static String fingerprint(List<Subscription> subscriptions, RecordShape shape, OutboxColumns columns) {
        return fingerprint(subscriptions, shape, columns, false);
    }

    /** The same, and strict order (best-effort adds nothing: the fingerprint of versions without the key). */
    static String fingerprint(List<Subscription> subscriptions, RecordShape shape, OutboxColumns columns,
                              boolean strictOrder) {
        List<Subscription> byName = new ArrayList<>(subscriptions);
        byName.sort(Comparator.comparing(Subscription::name));
        StringBuilder canonical = new StringBuilder(String.valueOf(shape)).append("\n\n")
            .append(columns.fingerprintPart()).append(strictOrder ? "ordering strict\n\n" : "");
        for (Subscription s : byName) {
            canonical.append(s.name()).append('\n').append(s.topic()).append('\n')
                .append(String.join(",", new TreeSet<>(s.eventTypeGlobs()))).append('\n')
                .append(s.coalesce()).append("\n\n");
        }
        return sha256Hex(canonical.toString());
    }

    private static String sha256Hex(String s) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 3);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    /** The application name of a relay session of task {@code owner}; the owner part is cut if too long. */
    String applicationName(String owner) {
        String ascii = owner.replaceAll("[^\\x20-\\x7e]", "?");
        return PREFIX + (ascii.length() > OWNER_ROOM ? ascii.substring(0, OWNER_ROOM) : ascii) + "@" + tableFingerprint
            + "." + fingerprint + "." + connectorFingerprint;
    }

    /**
     * Why this connector must not relay the table, naming the running connector that serves other
     * subscriptions on it and the fix; null when no such connector runs.
     */
    String conflict(Connection c) throws SQLException {
        List<String> names = new ArrayList<>();
        NamedSql.Bindable sql = JdbcOutboxStore.SQL.bindable("RelaySessionNames", "");
        try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
            sql.set(ps, "prefix", PREFIX);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
        }
        return conflictAmong(names);
    }

    /** {@link #conflict} over the application names of the database's sessions. */
    String conflictAmong(Collection<String> applicationNames) {
        for (String name : applicationNames) {
            Matcher m = ANNOUNCED.matcher(name);
            if (!m.matches() || !m.group(2).equals(tableFingerprint) || m.group(3).equals(fingerprint)
                || m.group(4).equals(connectorFingerprint)) {
                continue; // another table, the same records, or this connector's own sessions
            }
            String owner = m.group(1);
            String other = owner.length() == OWNER_ROOM ? owner + "..." : owner.replaceFirst("-\\d+$", "");
            return "connector '" + connector + "' would relay the same outbox table as running connector '"
                + other + "', but with other subscriptions, another record shape or another outbox.ordering. A row"
                + " is fanned out once, for the subscriptions of whichever connector claims it, so each connector's subscribers would lose"
                + " the rows the other one claims. Give '" + connector + "' exactly the subscription settings of '"
                + other + "' (subscriptions, every subscription.<name>.* key, value.format, headers.format, outbox.column.*,"
                + " outbox.ordering), or add"
                + " the new subscriptions to '" + other + "' instead of running a second connector, or give '"
                + connector + "' its own outbox table";
        }
        return null;
    }
}
