package io.outboxrelay.bench;

/**
 * The one event set every contender relays. Event {@code n} (a benchmark id, 0-based) is a row of the
 * project's {@code events} table with type {@code TYPES[n % 3]}, subject {@code subject-(n % 1000)} and
 * a 300-byte JSON payload {@code {"ref": "#n#", "data": "<md5 hex padding>"}} (300 bytes exactly as
 * PostgreSQL prints the jsonb). The {@code #n#} marker survives any JSON encoding (it needs no
 * escaping), so a consumer finds the benchmark id in any record value with one byte scan.
 */
final class BenchEvents {
    static final int SUBJECTS = 1000;
    static final int PAYLOAD_BYTES = 300;
    static final String[] TYPES = {"supplier.connected", "supplier.activated", "note.created"};
    /** The one subject of the steady phase's hot-subject workload, one of the {@link #SUBJECTS}. */
    static final String HOT_SUBJECT = "subject-0";

    private static final String ROW_EXPRESSIONS = rowExpressions("'subject-' || (g % " + SUBJECTS + ")");

    /** Params: first id, last id (inclusive). One statement, one transaction in autocommit. */
    static final String INSERT_RANGE_SQL = "INSERT INTO events(type, subject, payload) SELECT " + ROW_EXPRESSIONS
        + " FROM generate_series(?::bigint, ?::bigint) g";

    /** Params: id. The writer of the latency runs: one event per transaction. */
    static final String INSERT_ONE_SQL = insertOne(ROW_EXPRESSIONS);

    /**
     * Params: id. {@link #INSERT_ONE_SQL} with every event's subject {@link #HOT_SUBJECT}: all of them in one relay
     * task's share, the other tasks' shares empty.
     */
    static final String INSERT_ONE_HOT_SQL = insertOne(rowExpressions("'" + HOT_SUBJECT + "'"));

    private BenchEvents() {
    }

    /** An event's type, subject ({@code subject}, an SQL expression over {@code g}) and payload from its id {@code g}. */
    private static String rowExpressions(String subject) {
        return "(ARRAY['supplier.connected','supplier.activated','note.created'])[1 + (g % 3)::int], " + subject + ", "
            + "('{\"ref\": \"#' || g || '#\", \"data\": \"' || substr(repeat(md5(g::text), 10), 1, "
            + (PAYLOAD_BYTES - 25) + " - length(g::text)) || '\"}')::jsonb";
    }

    private static String insertOne(String rowExpressions) {
        return "INSERT INTO events(type, subject, payload) SELECT " + rowExpressions + " FROM (SELECT ?::bigint AS g) s";
    }

    /** The benchmark id in a record value, or -1 when the value carries none. */
    static long idOf(byte[] value) {
        if (value == null) {
            return -1;
        }
        int i = 0;
        int n = value.length;
        while (i < n && value[i] != '#') {
            i++;
        }
        if (++i >= n) {
            return -1;
        }
        long id = 0;
        int digits = 0;
        while (i < n && value[i] >= '0' && value[i] <= '9') {
            id = id * 10 + (value[i++] - '0');
            digits++;
        }
        return digits > 0 && i < n && value[i] == '#' ? id : -1;
    }
}
