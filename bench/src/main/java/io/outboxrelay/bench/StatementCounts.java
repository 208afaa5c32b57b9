package io.outboxrelay.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The statements one database ran over a steady step's window (pg_stat_statements, reset at the window's start):
 * calls by {@link StatementKinds kind}, and the busiest few with their text, for diagnosis. The benchmark's own
 * queries of pg_stat_statements are left out; everything else in the step's database is the writers' or the
 * connector's, since nothing else connects to it.
 */
record StatementCounts(Map<String, Long> callsByKind, List<Map<String, Object>> top) {
    /** The kinds that are the connector's own top-level statements. */
    static final List<String> CONNECTOR_KINDS =
        List.of(StatementKinds.CLAIM, StatementKinds.STAMP, StatementKinds.WAKEUP, StatementKinds.OTHER);
    private static final int TOP = 12;

    static final StatementCounts NONE = new StatementCounts(Map.of(), List.of());

    /** Forgets every statement counted so far (all databases: the steps run one at a time). */
    static void reset(BenchDatabases.Db db) {
        db.execute("SELECT pg_stat_statements_reset()");
    }

    static StatementCounts read(BenchDatabases.Db db, StatementKinds kinds) {
        Map<String, Long> byKind = new LinkedHashMap<>();
        List<Map<String, Object>> top = new ArrayList<>();
        for (List<String> row : db.query("""
            SELECT toplevel, calls, round(total_exec_time::numeric, 1), rows, query
              FROM pg_stat_statements
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND query NOT LIKE '%pg_stat_statements%'
             ORDER BY calls DESC""")) {
            String query = row.get(4);
            String kind = kinds.kind(query, "t".equals(row.get(0)));
            long calls = Long.parseLong(row.get(1));
            byKind.merge(kind, calls, Long::sum);
            if (top.size() < TOP) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("kind", kind);
                m.put("name", kinds.name(query));
                m.put("calls", calls);
                m.put("totalMs", Double.parseDouble(row.get(2)));
                m.put("rows", Long.parseLong(row.get(3)));
                String text = query.replaceAll("\\s+", " ").trim();
                m.put("query", text.length() > 140 ? text.substring(0, 140) + " ..." : text);
                top.add(m);
            }
        }
        return new StatementCounts(byKind, top);
    }

    /** The calls of both, by kind; the busiest statements of this one (each round's are alike). */
    StatementCounts plus(StatementCounts other) {
        Map<String, Long> byKind = new LinkedHashMap<>(callsByKind);
        other.callsByKind.forEach((k, v) -> byKind.merge(k, v, Long::sum));
        return new StatementCounts(byKind, top.isEmpty() ? other.top : top);
    }

    long calls(String kind) {
        return callsByKind.getOrDefault(kind, 0L);
    }

    /** The connector's top-level statements: claims, stamps, wake-up and other. */
    long connectorCalls() {
        return CONNECTOR_KINDS.stream().mapToLong(this::calls).sum();
    }
}
