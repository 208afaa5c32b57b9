package io.outboxrelay.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the worker's CPU goes during a relay drain: a JFR recording (settings=profile, sampling every
 * 10-20 ms per thread) of the worker JVM, reduced to the hottest leaf methods, the relay's own methods
 * (inclusive), the share of samples per component and per thread, and the top allocation sites; plus
 * the database's side from pg_stat_statements.
 */
final class Profiler {
    /** Components, tried in this order against every frame of a sample (inclusive share). */
    private static final Map<String, String> COMPONENTS = new LinkedHashMap<>();

    static {
        COMPONENTS.put("io.outboxrelay.", "relay (io.outboxrelay)");
        COMPONENTS.put("org.postgresql.", "JDBC driver (org.postgresql)");
        COMPONENTS.put("com.zaxxer.hikari.", "connection pool (HikariCP)");
        COMPONENTS.put("org.apache.kafka.connect.json.", "JsonConverter");
        COMPONENTS.put("com.fasterxml.jackson.", "Jackson");
        COMPONENTS.put("org.apache.kafka.connect.runtime.", "Connect runtime (WorkerSourceTask, offsets)");
        COMPONENTS.put("org.apache.kafka.connect.header.", "Connect headers");
        COMPONENTS.put("org.apache.kafka.connect.data.", "Connect data (Struct, schema)");
        COMPONENTS.put("org.apache.kafka.clients.producer.", "Kafka producer");
        COMPONENTS.put("org.apache.kafka.common.record.", "Kafka record batches");
        COMPONENTS.put("org.apache.kafka.common.network.", "Kafka network");
        COMPONENTS.put("io.debezium.", "Debezium");
    }

    private Profiler() {
    }

    /** Prints the summary of a recording: {@code java -cp ... io.outboxrelay.bench.Profiler file.jfr}. */
    public static void main(String[] args) throws IOException {
        System.out.println(new com.fasterxml.jackson.databind.ObjectMapper()
            .enable(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT)
            .writeValueAsString(summarize(Path.of(args[0]))));
    }

    static Map<String, Object> summarize(Path jfr) throws IOException {
        Map<String, Long> leaf = new HashMap<>();
        Map<String, Long> relayInclusive = new HashMap<>();
        Map<String, Long> component = new HashMap<>();
        Map<String, Long> threads = new HashMap<>();
        Map<String, Long> allocations = new HashMap<>();
        long samples = 0;
        long allocTotal = 0;
        Set<Long> firstSampleSeen = new HashSet<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(jfr)) {
            String type = e.getEventType().getName();
            if (type.equals("jdk.ExecutionSample")) {
                RecordedStackTrace st = e.getStackTrace();
                if (st == null || st.getFrames().isEmpty()) {
                    continue;
                }
                samples++;
                List<RecordedFrame> frames = st.getFrames();
                leaf.merge(method(frames.get(0)), 1L, Long::sum);
                Set<String> seenMethods = new HashSet<>();
                Set<String> seenComponents = new HashSet<>();
                for (RecordedFrame f : frames) {
                    String m = method(f);
                    if (m.startsWith("io.outboxrelay.") && seenMethods.add(m)) {
                        relayInclusive.merge(m, 1L, Long::sum);
                    }
                    for (Map.Entry<String, String> c : COMPONENTS.entrySet()) {
                        if (m.startsWith(c.getKey()) && seenComponents.add(c.getValue())) {
                            component.merge(c.getValue(), 1L, Long::sum);
                        }
                    }
                }
                threads.merge(threadGroup(e.getThread("sampledThread")), 1L, Long::sum);
            } else if (type.equals("jdk.ObjectAllocationSample")) {
                // a sample's weight is what its thread allocated since that thread's previous sample: a thread that
                // allocates rarely (the REST thread validating a config) gets one huge weight. Only the threads that
                // allocate all through the drain (the task thread, the producer's network thread) are comparable.
                String thread = threadGroup(e.getThread("eventThread"));
                if (!thread.startsWith("task thread") && !thread.startsWith("producer network thread")) {
                    continue;
                }
                // a thread's first sample weighs everything it allocated before the recording started
                if (e.getThread("eventThread") == null
                    || firstSampleSeen.add(e.getThread("eventThread").getJavaThreadId())) {
                    continue;
                }
                RecordedStackTrace st = e.getStackTrace();
                long weight = e.getLong("weight");
                allocTotal += weight;
                if (st == null) {
                    continue;
                }
                String site = "?";
                for (RecordedFrame f : st.getFrames()) {
                    String m = method(f);
                    if (!m.startsWith("java.") && !m.startsWith("jdk.") && !m.startsWith("sun.")) {
                        site = m;
                        break;
                    }
                }
                allocations.merge(site, weight, Long::sum);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("samples", samples);
        out.put("topSelf", top(leaf, samples, 25, "samples"));
        out.put("topRelayFrames", top(relayInclusive, samples, 15, "samples"));
        out.put("components", top(component, samples, 20, "samples"));
        out.put("threads", top(threads, samples, 10, "samples"));
        out.put("allocationSites", top(allocations, allocTotal, 15, "bytes"));
        out.put("allocationNote", "sampled bytes on the task thread and the producer network thread only");
        return out;
    }

    private static String method(RecordedFrame f) {
        if (f.getMethod() == null || f.getMethod().getType() == null) {
            return "?";
        }
        return f.getMethod().getType().getName() + "." + f.getMethod().getName();
    }

    /** Thread names without their numbers: "task-thread-relay-t1s1-12-0" becomes "task-thread-*". */
    private static String threadGroup(RecordedThread t) {
        if (t == null || t.getJavaName() == null) {
            return "?";
        }
        String n = t.getJavaName();
        if (n.startsWith("task-thread-") || n.matches("pool-\\d+-thread-\\d+")) {
            return "task thread (poll, convert, send)";
        }
        if (n.startsWith("kafka-producer-network-thread")) {
            return "producer network thread (acks, commitRecord)";
        }
        if (n.startsWith("outbox-relay-listen")) {
            return "relay LISTEN thread";
        }
        return n.replaceAll("[-_ ]?\\d+", "-*");
    }

    private static List<Map<String, Object>> top(Map<String, Long> counts, long total, int n, String unit) {
        List<Map.Entry<String, Long>> entries = new ArrayList<>(counts.entrySet());
        entries.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map.Entry<String, Long> e : entries.subList(0, Math.min(n, entries.size()))) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", e.getKey());
            m.put(unit, e.getValue());
            m.put("percent", total == 0 ? 0 : Results.round1(100.0 * e.getValue() / total));
            out.add(m);
        }
        return out;
    }

    /** The database's statements of the profiled drain, by total execution time. */
    static List<Map<String, Object>> sqlStatements(BenchDatabases.Db db) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (List<String> row : db.query("""
            SELECT calls, round(total_exec_time::numeric, 1), round(mean_exec_time::numeric, 3), rows,
                   regexp_replace(left(query, 160), '\\s+', ' ', 'g')
              FROM pg_stat_statements
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
             ORDER BY total_exec_time DESC LIMIT 10""")) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("calls", Long.parseLong(row.get(0)));
            m.put("totalMs", Double.parseDouble(row.get(1)));
            m.put("meanMs", Double.parseDouble(row.get(2)));
            m.put("rows", Long.parseLong(row.get(3)));
            m.put("query", row.get(4));
            out.add(m);
        }
        return out;
    }
}
