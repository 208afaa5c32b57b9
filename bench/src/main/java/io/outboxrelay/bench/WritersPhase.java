package io.outboxrelay.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The writer ceiling (issue 13): how many durable single-event commits per second a few application
 * connections reach, each committing one {@code events} row per transaction (autocommit, the latency
 * writer's statement) as fast as it can, on a fresh, empty table. Every setup gets a fresh database per
 * measurement; setups run in one order in odd rounds and in the reverse order in even rounds, so that a
 * drift of the machine over the phase does not favour one of them.
 */
final class WritersPhase {
    /** The benchmark ids the writers use (payload markers), above every other phase's. */
    private static final AtomicLong IDS = new AtomicLong(3_000_000_000L);

    private WritersPhase() {
    }

    /** The setups measured: tables with no connector first, then each wake-up with the relay, then Debezium. */
    static List<TableSetup> setups(BenchOptions o) {
        String noTrigger = WakeupVariant.DROP_TRIGGERS;
        List<TableSetup> s = new ArrayList<>();
        s.add(TableSetup.table("pk-only", "primary key only (no other index, no trigger, fillfactor 100)",
            noTrigger + "\n" + WakeupVariant.resource("pk-only.sql")));
        s.add(TableSetup.table("shipped", "schema as shipped, no connector", ""));
        s.add(TableSetup.table("no-trigger", "schema as shipped without its trigger, no connector", noTrigger));
        s.add(TableSetup.table("no-trigger-no-id-unique", "without trigger and without the id UNIQUE index",
            noTrigger + "\nALTER TABLE events DROP CONSTRAINT events_id_key;"));
        s.add(TableSetup.table("no-trigger-no-claim-index", "without trigger and without the partial claim index",
            noTrigger + "\nDROP INDEX events_unfanned_idx;"));
        s.add(TableSetup.table("no-trigger-fillfactor-100", "without trigger, fillfactor 100 instead of 50",
            noTrigger + "\nALTER TABLE events RESET (fillfactor);"));
        s.add(TableSetup.relay(WakeupVariant.SHIPPED));
        s.add(TableSetup.relay(WakeupVariant.LEGACY));
        s.add(TableSetup.relay(WakeupVariant.POLLING));
        for (WakeupVariant w : o.writers().extraWakeups()) {
            s.add(TableSetup.relay(w));
        }
        for (RelayVariant v : o.relayVariants()) {
            s.add(TableSetup.relay(v));
        }
        if (o.debezium()) {
            s.add(TableSetup.debezium());
            // the relay's latency peer: a poll every 10 ms instead of 500
            s.add(TableSetup.debeziumTuned());
        }
        return s;
    }

    /** Adds each measurement to {@code runs} as it is made. */
    static void run(Bench b, List<Results.WriterRun> runs) throws Exception {
        BenchOptions.WriterOptions w = b.options.writers();
        List<TableSetup> setups = setups(b.options);
        // unmeasured: the relay and Debezium at full speed until the JVMs are warm, so that no measured window shares
        // the 2 cores with a JIT compiling one contender's paths and not the other's
        int most = w.connections().stream().mapToInt(Integer::intValue).max().orElse(1);
        List<TableSetup> primed = new ArrayList<>(List.of(TableSetup.relay(WakeupVariant.SHIPPED)));
        if (b.options.debezium()) {
            primed.add(TableSetup.debezium());
        }
        for (TableSetup s : primed) {
            b.primeUntilJitQuiet("writers", s.label(), n -> {
                b.log("  priming %s, %d connections (not measured, #%d)", s.key(), most, n);
                return measure(b, s, most, 0, w).cpu();
            });
        }
        for (int round = 1; round <= w.rounds(); round++) {
            for (int connections : w.connections()) {
                List<TableSetup> order = new ArrayList<>(setups);
                if (round % 2 == 0) {
                    Collections.reverse(order);
                }
                for (TableSetup s : order) {
                    runs.add(measure(b, s, connections, round, w));
                }
            }
        }
    }

    /**
     * Events committed but not yet relayed when the window ends: the relay's rows not fanned out, Debezium's events
     * not yet in its topic (it reads the WAL behind the writers and may be far behind: its CPU in the window is then
     * less than what relaying them costs). -1 when it cannot tell.
     */
    private static long unrelayed(Bench b, TableSetup s, Contender c, BenchDatabases.Db db) {
        if (s.kind() == TableSetup.Kind.RELAY) {
            return db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NULL");
        }
        if (c == null || c.topics().isEmpty()) {
            return -1;
        }
        long committed = db.queryLong("SELECT count(*) FROM events");
        try {
            long records = b.kafka.endOffsets(c.topics()).values().stream().mapToLong(Long::longValue).sum();
            return Math.max(0, committed - records / c.topics().size());
        } catch (IllegalStateException e) {
            return -1; // no topic yet
        }
    }

    private static Results.WriterRun measure(Bench b, TableSetup s, int connections, int round,
                                             BenchOptions.WriterOptions w) throws Exception {
        BenchDatabases.Db db = b.postgres.createDatabase("writers");
        Contender c = null;
        try {
            c = s.start(b, db);
            // every measurement starts right after a checkpoint: the same full-page writes for each
            db.execute("CHECKPOINT");
            Load load = full(b, db, connections, w.warmupSeconds(), w.seconds());
            long unrelayed = unrelayed(b, s, c, db);
            Results.WriterRun r = new Results.WriterRun(s.key(), s.label(), s.kind().name().toLowerCase(), connections,
                round, load.commits, Results.round2(load.seconds), Math.round(load.commits / load.seconds), unrelayed,
                Results.Cpu.of(load.cpu, load.commits));
            b.log("  %-28s %2d connections, round %d: %,7.0f commits/s (postgres %.0f, worker %.0f us/commit;"
                    + " other processes %.2f cores%s)", s.key(), connections, round, r.commitsPerSec(),
                r.cpu().postgresUsPerEvent(), r.cpu().workerUsPerEvent(), r.cpu().othersCores(),
                unrelayed >= 0 ? String.format("; %,d events not yet relayed at the end", unrelayed) : "");
            return r;
        } finally {
            if (c != null) {
                c.close();
            }
            b.postgres.dropDatabase(db);
        }
    }

    private record Load(long commits, double seconds, CpuMeter.Sample cpu) {
    }

    /**
     * {@code connections} threads, each with its own connection, commit one event per transaction as fast as
     * they can; the commits of the {@code seconds} after a {@code warmupSeconds} warm-up are counted.
     */
    private static Load full(Bench b, BenchDatabases.Db db, int connections, int warmupSeconds, int seconds)
        throws InterruptedException {
        LongAdder commits = new LongAdder();
        CountDownLatch connected = new CountDownLatch(connections);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        for (int i = 0; i < connections; i++) {
            Thread t = new Thread(() -> {
                try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(BenchEvents.INSERT_ONE_SQL)) {
                    c.setAutoCommit(true);
                    connected.countDown();
                    while (!stop.get() && failure.get() == null) {
                        ps.setLong(1, IDS.getAndIncrement());
                        ps.executeUpdate();
                        commits.increment();
                    }
                } catch (SQLException | RuntimeException e) {
                    failure.compareAndSet(null, e);
                    connected.countDown();
                }
            }, "bench-full-writer-" + i);
            threads.add(t);
            t.start();
        }
        try {
            connected.await();
            Thread.sleep(warmupSeconds * 1000L);
            CpuMeter.Sample cpu0 = b.cpu.sample();
            long c0 = commits.sum();
            long t0 = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            long c1 = commits.sum();
            long t1 = System.nanoTime();
            CpuMeter.Sample used = b.cpu.sample().minus(cpu0);
            if (failure.get() != null) {
                throw new IllegalStateException("a writer failed: " + failure.get().getMessage(), failure.get());
            }
            return new Load(c1 - c0, (t1 - t0) / 1e9, used);
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
        }
    }

    /** Each setup and connection count over its rounds (see {@link Results.WriterCase}). */
    static List<Results.WriterCase> summarize(List<Results.WriterRun> runs) {
        List<Results.WriterCase> out = new ArrayList<>();
        runs.stream().map(r -> r.key() + "@" + r.connections()).distinct().forEach(id -> {
            List<Results.WriterRun> mine = runs.stream().filter(r -> id.equals(r.key() + "@" + r.connections()))
                .toList();
            Results.WriterRun first = mine.get(0);
            var rates = mine.stream().mapToDouble(Results.WriterRun::commitsPerSec).summaryStatistics();
            out.add(new Results.WriterCase(first.key(), first.label(), first.connector(), first.connections(),
                mine.size(), Math.round(rates.getAverage()), rates.getMin(), rates.getMax(),
                ratio(mine, runs, "pk-only"), first.connector().equals("relay") ? ratio(mine, runs, "debezium")
                : new Results.Ratio(Double.NaN, Double.NaN, Double.NaN),
                Results.round1(mine.stream().mapToDouble(r -> r.cpu().postgresUsPerEvent()).average().orElse(0)),
                Results.round1(mine.stream().mapToDouble(r -> r.cpu().workerUsPerEvent()).average().orElse(0)),
                mine.stream().mapToDouble(r -> r.cpu().othersCores()).max().orElse(0)));
        });
        return out;
    }

    /** Setup {@code key}'s rates over {@code reference}'s, round by round, with {@code connections} writers. */
    static Results.Ratio ratio(List<Results.WriterRun> all, String key, String reference, int connections) {
        return ratio(all.stream().filter(r -> r.key().equals(key) && r.connections() == connections).toList(), all,
            reference);
    }

    /** These runs' rates over the reference setup's in the same round and with as many connections. */
    private static Results.Ratio ratio(List<Results.WriterRun> mine, List<Results.WriterRun> all, String reference) {
        List<Double> ratios = new ArrayList<>();
        for (Results.WriterRun r : mine) {
            all.stream().filter(o -> o.key().equals(reference) && o.connections() == r.connections()
                    && o.round() == r.round() && o.commitsPerSec() > 0).findFirst()
                .ifPresent(o -> ratios.add(r.commitsPerSec() / o.commitsPerSec()));
        }
        if (ratios.isEmpty()) {
            return new Results.Ratio(Double.NaN, Double.NaN, Double.NaN);
        }
        var st = ratios.stream().mapToDouble(Double::doubleValue).summaryStatistics();
        return new Results.Ratio(Results.round2(st.getAverage()), Results.round2(st.getMin()),
            Results.round2(st.getMax()));
    }
}
