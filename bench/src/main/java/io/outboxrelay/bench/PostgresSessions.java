package io.outboxrelay.bench;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PostgreSQL's CPU by who used it, over a steady step's window: each server process's CPU from {@code /proc}, named
 * by what {@code pg_stat_activity} says it is. The relay's sessions announce themselves in {@code application_name}
 * ({@code outbox-relay:...}); of those, the one whose last statement is a LISTEN or an UNLISTEN is its LISTEN session.
 * Processes that exit during the window (autovacuum workers, closed sessions) are counted from what the postmaster
 * reaped. Outside Linux every reading is empty.
 */
final class PostgresSessions {
    static final String RELAY = "relay sessions";
    static final String RELAY_LISTEN = "relay LISTEN sessions";
    static final String DEBEZIUM = "Debezium (walsender)";
    static final String WRITERS = "writers' sessions";
    static final String AUTOVACUUM = "autovacuum";
    static final String EXITED = "exited in the window";
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

    static Reading read(BenchDatabases.Db db, long postmasterPid) {
        long[] pm = postmasterPid <= 0 ? null : CpuMeter.stat(postmasterPid);
        if (pm == null) {
            return Reading.NONE;
        }
        Map<Long, String> kinds = new HashMap<>();
        for (List<String> row : db.query("SELECT pid, backend_type, coalesce(application_name, ''),"
            + " left(coalesce(query, ''), 9) FROM pg_stat_activity WHERE pid <> pg_backend_pid()")) {
            kinds.put(Long.parseLong(row.get(0)), kind(row.get(1), row.get(2), row.get(3)));
        }
        Map<Long, Long> ticks = new HashMap<>();
        for (Long pid : kinds.keySet()) {
            long[] s = CpuMeter.stat(pid);
            if (s != null && s[4] == postmasterPid) {
                ticks.put(pid, s[0] + s[1]);
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
     * it had at the end (a LISTEN session whose last statement was its probe at the start is still a LISTEN session);
     * one that exited counts as {@link #EXITED}, with what it had used before the window taken out of the reaped total.
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
            long before = start.ticks().getOrDefault(e.getKey(), 0L);
            String kind = end.kinds().getOrDefault(e.getKey(), BACKGROUND);
            if (RELAY.equals(kind) && RELAY_LISTEN.equals(start.kinds().get(e.getKey()))) {
                kind = RELAY_LISTEN;
            }
            ticks.merge(kind, e.getValue() - before, Long::sum);
        }
        ticks.merge(EXITED, Math.max(0, end.reapedTicks() - start.reapedTicks() - exitedBefore), Long::sum);
        Map<String, Long> ms = new LinkedHashMap<>();
        ticks.forEach((k, v) -> ms.put(k, v * 1000 / TICKS_PER_SECOND));
        return ms;
    }
}
