package io.outboxrelay.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Idle cost: the CPU the worker JVM and PostgreSQL use while a connector runs and nobody writes, over a
 * fixed time, first with no connector at all (the floor: Connect's own heartbeats, PostgreSQL's
 * background processes), then per connector. The relay's share per task is its reading minus the floor,
 * divided by its tasks: a relay that polls pays for every poll, one that listens should cost ~nothing.
 */
final class IdlePhase {
    private IdlePhase() {
    }

    static List<Results.Idle> run(Bench b) throws Exception {
        List<TableSetup> setups = new ArrayList<>();
        setups.add(TableSetup.table("none", "no connector (worker and PostgreSQL alone)", ""));
        setups.add(TableSetup.relay(WakeupVariant.SHIPPED));
        setups.add(TableSetup.relay(WakeupVariant.POLLING));
        for (WakeupVariant w : b.options.writers().extraWakeups()) {
            setups.add(TableSetup.relay(w));
        }
        for (RelayVariant v : b.options.relayVariants()) {
            setups.add(TableSetup.relay(v));
        }
        if (b.options.debezium()) {
            setups.add(TableSetup.debezium());
        }
        int seconds = b.options.writers().idleSeconds();
        List<Results.Idle> out = new ArrayList<>();
        Results.Idle floor = null;
        for (TableSetup s : setups) {
            Results.Idle r = measure(b, s, seconds, floor);
            if (floor == null) {
                floor = r;
            }
            out.add(r);
        }
        return out;
    }

    private static Results.Idle measure(Bench b, TableSetup s, int seconds, Results.Idle floor) throws Exception {
        BenchDatabases.Db db = b.postgres.createDatabase("idle");
        Contender c = null;
        try {
            c = s.start(b, db);
            Thread.sleep(2_000); // start-up work (the relay's first claims, Debezium's slot) is not idle cost
            CpuMeter.Sample cpu0 = b.cpu.sample();
            Thread.sleep(seconds * 1000L);
            CpuMeter.Sample used = b.cpu.sample().minus(cpu0);
            double wall = Math.max(1, used.wallMs());
            double worker = used.workerMs() * 1000 / wall;
            double postgres = used.postgresMs() * 1000 / wall;
            int tasks = c == null ? 0 : c.tasks();
            double workerPerTask = floor == null || tasks == 0 ? Double.NaN : (worker - floor.workerMsPerSec()) / tasks;
            double postgresPerTask = floor == null || tasks == 0 ? Double.NaN
                : (postgres - floor.postgresMsPerSec()) / tasks;
            Results.Idle r = new Results.Idle(s.key(), s.label(), tasks, Results.round1(wall / 1000),
                Results.round1(worker), Results.round1(postgres), Results.round1(workerPerTask),
                Results.round1(postgresPerTask), Results.round2(used.othersMs() / wall));
            b.log("  idle %-20s worker %.1f, postgres %.1f CPU ms/s (per task over the floor: %.1f / %.1f; other"
                    + " processes %.2f cores)", s.key(), r.workerMsPerSec(), r.postgresMsPerSec(), r.workerMsPerSecPerTask(),
                r.postgresMsPerSecPerTask(), r.othersCores());
            return r;
        } finally {
            if (c != null) {
                c.close();
            }
            b.postgres.dropDatabase(db);
        }
    }
}
