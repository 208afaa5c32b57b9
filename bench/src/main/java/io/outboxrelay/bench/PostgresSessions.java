package io.outboxrelay.bench;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PostgreSQL's CPU by who used it, over a steady step's window: each server process's CPU from {@code /proc}, named
 * by what {@code pg_stat_activity} says it is. The relay's sessions announce themselves in {@code application_name}
 * ({@code outbox-relay:...}); of those, the one whose last statement is a LISTEN or an UNLISTEN is its LISTEN session.
 * The sessions are named once, when the window starts (a query, which takes a few ms); the two readings of
 * {@code /proc} are taken at the window's edges, the last one before the writers close their sessions (the server
 * reaps an exited backend a moment later). Processes that start or exit within the window (autovacuum workers above
 * all) are counted apart, those that exited from what the postmaster reaped. Outside Linux every reading is empty.
 */
final class PostgresSessions {
    static final String RELAY = "relay sessions";
    static final String RELAY_LISTEN = "relay LISTEN sessions";
    static final String DEBEZIUM = "Debezium (walsender)";
    static final String WRITERS = "writers' sessions";
    static final String AUTOVACUUM = "autovacuum";
    static final String EXITED = "started or exited in the window";
    static final String BACKGROUND = "other background";
    /** The kinds, in the order the report shows them. */
    static final List<String> KINDS = List.of(RELAY, RELAY_LISTEN, DEBEZIUM, WRITERS, AUTOVACUUM, EXITED, BACKGROUND);

    private static final long TICKS_PER_SECOND = 100;
    private static final String RELAY_APPLICATION = "outbox-relay";

    /** One reading: each live process's CPU (ticks) and kind, and what the postmaster reaped. */
    record Reading(Map<Long, Long> ticks, Map<Long, String> kinds, long reapedTicks) {
        static final Reading NONE = new Reading(Map.of(), Map.of(), 0);
    }

    private PostgresSessions() {
    }

    /** What each server process is, by pid, as pg_stat_activity says now. */
    static Map<Long, String> kinds(BenchDatabases.Db db) {
        Map<Long, String> kinds = new HashMap<>();
        for (List<String> row : db.query("SELECT pid, backend_type, coalesce(application_name, ''),"
            + " left(coalesce(query, ''), 9) FROM pg_stat_activity WHERE pid <> pg_backend_pid()")) {
            kinds.put(Long.parseLong(row.get(0)), kind(row.get(1), row.get(2), row.get(3)));
        }
        return kinds;
    }

    /** Every live server process's CPU from /proc, named by {@code kinds}, and what the postmaster reaped so far. */
    static Reading read(long postmasterPid, Map<Long, String> kinds) {
        long[] pm = postmasterPid <= 0 ? null : CpuMeter.stat(postmasterPid);
        java.util.Optional<ProcessHandle> postmaster = ProcessHandle.of(postmasterPid);
        if (pm == null || postmaster.isEmpty()) {
            return Reading.NONE;
        }
        Map<Long, Long> ticks = new HashMap<>();
        for (ProcessHandle child : (Iterable<ProcessHandle>) postmaster.get().children()::iterator) {
            long[] s = CpuMeter.stat(child.pid());
            if (s != null) {
                ticks.put(child.pid(), s[0] + s[1]);
            }
        }
        return new Reading(ticks, kinds, pm[2] + pm[3]);
    }

    static String kind(String backendType, String application, String query) {
        if (backendType.equals("walsender") || application.startsWith("Debezium")) {
            return DEBEZIUM;
        }
        if (backendType.equals("autovacuum worker")) {
            return AUTOVACUUM;
        }
        if (!backendType.equals("client backend")) {
            return BACKGROUND;
        }
        if (application.startsWith(RELAY_APPLICATION)) {
            return query.startsWith("LISTEN") || query.startsWith("UNLISTEN") ? RELAY_LISTEN : RELAY;
        }
        return WRITERS;
    }

    /**
     * Milliseconds of CPU by kind between two readings. A process alive at both counts its difference, under the kind
     * the end reading gives it (a LISTEN session whose last statement was its probe at the other is still a LISTEN
     * session); one that started in the window counts whole, and one that exited what was reaped beyond what it had
     * used before, both as {@link #EXITED}.
     */
    static Map<String, Long> between(Reading start, Reading end) {
        Map<String, Long> ticks = new LinkedHashMap<>();
        KINDS.forEach(k -> ticks.put(k, 0L));
        long exitedBefore = 0;
        for (Map.Entry<Long, Long> e : start.ticks().entrySet()) {
            Long after = end.ticks().get(e.getKey());
            if (after == null) {
                exitedBefore += e.getValue();
            }
        }
        for (Map.Entry<Long, Long> e : end.ticks().entrySet()) {
            Long before = start.ticks().get(e.getKey());
            String kind = before == null ? EXITED : end.kinds().getOrDefault(e.getKey(), BACKGROUND);
            if (RELAY.equals(kind) && RELAY_LISTEN.equals(start.kinds().get(e.getKey()))) {
                kind = RELAY_LISTEN;
            }
            ticks.merge(kind, e.getValue() - (before == null ? 0 : before), Long::sum);
        }
        ticks.merge(EXITED, Math.max(0, end.reapedTicks() - start.reapedTicks() - exitedBefore), Long::sum);
        Map<String, Long> ms = new LinkedHashMap<>();
        ticks.forEach((k, v) -> ms.put(k, v * 1000 / TICKS_PER_SECOND));
        return ms;
    }
}
