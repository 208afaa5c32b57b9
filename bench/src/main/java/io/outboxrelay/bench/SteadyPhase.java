package io.outboxrelay.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The steady-rate cost (issue 23): what relaying costs PostgreSQL, the worker and the broker per event while the
 * application commits one event per transaction at a fixed rate. For each workload and rate, one step with no
 * connector (the writers alone) and one per contender streaming; each contender's cost is its step minus the
 * no-connector step ({@link SteadyAccounting}). Every step gets a fresh database, is measured right after a
 * CHECKPOINT, starts once the machine is quiet again, and runs the same {@link PacedWriter} schedule: an unmeasured
 * warm-up, then the measured window.
 * Within a group (a workload at a rate) the no-connector step runs between the relay and the tuned Debezium, the
 * pair the targets compare, and every other group runs in the mirrored order, so drift does not favour a side.
 * Before the first group the relay and the tuned Debezium each run one step unmeasured.
 */
final class SteadyPhase {
    /** Rows of the second workload's other table. */
    static final int ACCOUNTS = 100_000;
    /** Events relayed before a step starts, to know the contender streams. */
    private static final int PRIMING_EVENTS = 20;

    private SteadyPhase() {
    }

    /** One kind of application transaction, with what its tables need besides the outbox schema. */
    record Workload(String key, String label, PacedWriter.Transaction transaction, List<String> setupSql) {
        static final Workload EVENTS = new Workload("events", "one event per transaction", PacedWriter.ONE_EVENT,
            List.of());
        /**
         * One event per transaction, all on one subject: one relay task's share takes every row and the others stay
         * empty, woken by the busy share's NOTIFYs only (what a wake-up that arms too often costs shows here).
         */
        static final Workload HOT_SUBJECT = new Workload("hot-subject", "one event per transaction, all on subject "
            + BenchEvents.HOT_SUBJECT, PacedWriter.oneEvent(BenchEvents.INSERT_ONE_HOT_SQL), List.of());

        /** One event and {@code rows} random rows of another table updated, in one statement, one commit. */
        static Workload eventsAndUpdates(int rows) {
            return new Workload("events+" + rows + "-updates", "one event and " + rows + " updated rows of another"
                + " table per transaction", new AccountUpdates(rows), List.of(AccountUpdates.CREATE,
                "VACUUM ANALYZE bench_accounts"));
        }
    }

    /** Adds each step to {@code steps} and each contender's cost to {@code costs} as they are measured. */
    static void run(Bench b, List<Results.SteadyStep> steps, List<Results.SteadyCost> costs) throws Exception {
        BenchOptions.SteadyOptions o = b.options.steady();
        List<TableSetup> all = new ArrayList<>(List.of(relay()));
        List<TableSetup> withUpdates = new ArrayList<>(List.of(relay()));
        List<TableSetup> relays = new ArrayList<>(List.of(relay()));
        if (b.options.debezium()) {
            all.add(TableSetup.debeziumTuned());
            all.add(TableSetup.debezium());
            withUpdates.add(TableSetup.debeziumTuned());
        }
        for (RelayVariant v : b.options.relayVariants()) {
            all.add(TableSetup.relay(v));
            withUpdates.add(TableSetup.relay(v));
            relays.add(TableSetup.relay(v));
        }
        List<String> failures = new ArrayList<>();
        for (TableSetup s : all.subList(0, Math.min(2, all.size()))) {
            prime(b, s);
        }
        int group = 0;
        int order = 0;
        // each workload with its contenders: WAL decoding's cost does not depend on the subjects
        Map<Workload, List<TableSetup>> workloads = new LinkedHashMap<>();
        workloads.put(Workload.EVENTS, all);
        if (o.updatedRows() > 0) {
            workloads.put(Workload.eventsAndUpdates(o.updatedRows()), withUpdates);
        }
        if (o.hotSubject()) {
            workloads.put(Workload.HOT_SUBJECT, relays);
        }
        for (int round = 1; round <= o.rounds(); round++) {
            for (Workload w : workloads.keySet()) {
                StatementKinds kinds = StatementKinds.shipped(w.transaction().sql());
                for (int rate : o.rates()) {
                    List<Results.SteadyStep> measured = new ArrayList<>();
                    // group + round: each round flips the order of the one before, whatever the number of groups
                    for (TableSetup s : order(none(), workloads.get(w), group++ + round - 1)) {
                        try {
                            measured.add(step(b, w, rate, round, ++order, s, kinds));
                        } catch (Exception e) {
                            failures.add(s.label() + " at " + rate + "/s (" + w.key() + ", round " + round + "): "
                                + e.getMessage());
                            b.log("  !! steady step %s at %,d/s failed: %s", s.label(), rate, e);
                        }
                    }
                    steps.addAll(measured);
                    String over = "round " + round;
                    SteadyAccounting.costs(measured).forEach(c -> log(b, c, over));
                }
            }
        }
        for (Results.SteadyCost c : SteadyAccounting.costs(steps)) {
            costs.add(c);
            if (o.rounds() > 1) {
                log(b, c, "pooled");
            }
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException(failures.size() + " steady step(s) failed: " + String.join("; ", failures));
        }
    }

    /** Unmeasured steps of one kind of contender until the JVMs are warm ({@link Bench#primeUntilJitQuiet}). */
    private static void prime(Bench b, TableSetup s) throws Exception {
        int rate = b.options.steady().rates().get(0);
        b.primeUntilJitQuiet("steady", s.label(), n -> {
            b.log("  priming %s at %,d/s (not measured, #%d)", s.label(), rate, n);
            return step(b, Workload.EVENTS, rate, 0, 0, s, StatementKinds.shipped(Workload.EVENTS.transaction().sql()))
                .cpu();
        });
    }

    private static void log(Bench b, Results.SteadyCost c, String over) {
        b.log("  cost (%s) %-56s %,5d/s: Postgres %.0f + worker %.0f + broker %.0f = %.0f us/event; Postgres %.0f%% of"
                + " the writers' own %.0f us/commit; %.2f statements/event; Postgres by session %s", over, c.label(),
            c.rate(), c.postgresUsPerEvent(), c.workerUsPerEvent(), c.brokerUsPerEvent(), c.totalUsPerEvent(),
            c.postgresShareOfWritersPct(), c.writersPostgresUsPerCommit(), c.statementsPerEvent(),
            c.postgresUsPerEventByKind());
    }

    /** The relay as the targets judge it: 2 tasks on its defaults and the shipped schema. */
    private static TableSetup relay() {
        return new TableSetup("relay", "relay " + TableSetup.RELAY_TASKS + " tasks, defaults", "",
            TableSetup.Kind.RELAY, java.util.Map.of(), "");
    }

    /** The writers alone, on the table Debezium runs on (no trigger): the relay's cost includes its trigger's. */
    private static TableSetup none() {
        return TableSetup.table("none", "no connector (writers alone)", WakeupVariant.DROP_TRIGGERS);
    }

    /** {@code contenders[0]}, the no-connector step, the other contenders; reversed in odd groups. */
    static <T> List<T> order(T none, List<T> contenders, int group) {
        List<T> out = new ArrayList<>();
        if (!contenders.isEmpty()) {
            out.add(contenders.get(0));
        }
        out.add(none);
        out.addAll(contenders.subList(Math.min(1, contenders.size()), contenders.size()));
        if (group % 2 == 1) {
            Collections.reverse(out);
        }
        return out;
    }

    private static Results.SteadyStep step(Bench b, Workload w, int rate, int round, int order, TableSetup s,
                                           StatementKinds kinds) throws Exception {
        BenchOptions.SteadyOptions o = b.options.steady();
        b.awaitQuiet(String.format("steady step %s at %,d/s", s.label(), rate));
        BenchDatabases.Db db = b.postgres.createDatabase("steady");
        Contender c = null;
        try {
            w.setupSql().forEach(db::execute);
            c = s.start(b, db);
            if (c != null) {
                LatencyPhase.prime(c, b, db, PRIMING_EVENTS, false);
            }
            PacedWriter writer = new PacedWriter(db, rate, o.warmupSeconds() + o.seconds(), 0, o.connections(), true,
                w.transaction());
            CpuMeter.Sample[] edges = new CpuMeter.Sample[2];
            PostgresSessions.Reading[] sessions = new PostgresSessions.Reading[2];
            StatementCounts[] statements = {StatementCounts.NONE};
            // each step starts right after a checkpoint: the same full-page writes for each
            db.execute("CHECKPOINT");
            try (RecordWatcher watcher = c == null ? null
                : new RecordWatcher(b.kafka, c.topics(), 0, writer.count(), false)) {
                writer.run(rate * o.warmupSeconds(), () -> {
                    Map<Long, String> named = PostgresSessions.kinds(db);
                    sessions[0] = PostgresSessions.read(b.postgres.postmasterPid(), named);
                    edges[0] = b.cpu.sample();
                    StatementCounts.reset(db);
                }, () -> {
                    edges[1] = b.cpu.sample();
                    sessions[1] = PostgresSessions.read(b.postgres.postmasterPid(), sessions[0].kinds());
                    statements[0] = StatementCounts.read(db, kinds);
                });
                long received = -1;
                if (watcher != null) {
                    watcher.awaitDistinct(writer.committed() * c.topics().size(), Duration.ofSeconds(o.deliverySeconds()));
                    received = watcher.distinct() / c.topics().size();
                }
                return logged(b, new Results.SteadyStep(w.key(), rate, round, order, s.key(), s.label(),
                    c == null ? "none" : c.kind(), s.variant(), c == null ? 0 : c.tasks(), writer.committed(),
                    writer.windowCommits(), Results.round1(writer.windowCommits() / writer.windowSeconds()), received,
                    received < 0 ? 0 : Math.max(0, writer.committed() - received),
                    Results.Cpu.of(edges[1].minus(edges[0]), writer.windowCommits()), statements[0],
                    PostgresSessions.between(sessions[0], sessions[1])));
            }
        } finally {
            try {
                if (c != null) {
                    c.close();
                }
            } finally {
                b.postgres.dropDatabase(db);
            }
        }
    }

    private static Results.SteadyStep logged(Bench b, Results.SteadyStep s) {
        Results.Cpu cpu = s.cpu();
        double wall = Math.max(1, cpu.wallMs());
        b.log("  %-17s %,5d/s %-56s writers %,.0f/s; CPU ms/s: Postgres %.0f, worker %.0f, broker %.0f (of which JIT"
                + " %.0f), bench %.0f; %s; %.2f connector statements/event; other processes %.2f cores", s.workload(),
            s.rate(), s.label(), s.achievedRate(), cpu.postgresMs() * 1000 / wall, cpu.workerMs() * 1000 / wall,
            cpu.brokerMs() * 1000 / wall, cpu.jitMsPerSecond(), cpu.benchMs() * 1000 / wall,
            s.received() < 0 ? "no consumer" : String.format("%,d of %,d delivered", s.received(), s.committed()),
            s.statements().connectorCalls() / (double) Math.max(1, s.windowCommits()), cpu.othersCores());
        return s;
    }
}
