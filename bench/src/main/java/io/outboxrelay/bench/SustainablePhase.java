package io.outboxrelay.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The sustainable rate (issue 15): the highest single-event durable commit rate at which a contender keeps up.
 * The contender runs and streams (as in {@link LatencyPhase}); {@link PacedWriter} then commits one event per
 * transaction at each target rate in turn, from {@link BenchOptions.SustainableOptions#connections()}
 * connections, and every step is judged by {@link SustainableRate}: the writers' achieved rate (what the
 * contender leaves them of the machine) and the commit-to-consumer latency after the step's warm-up.
 * Contenders: the relay on its defaults with {@link TableSetup#RELAY_TASKS} tasks, Debezium on its defaults,
 * Debezium tuned for latency, then each {@code --relay-variant}. One database per contender; the steps run one
 * after the other on it, each only after the previous one's events were all delivered (or given up on).
 */
final class SustainablePhase {
    private SustainablePhase() {
    }

    /** Adds each contender's result to {@code out} as it is made. */
    static void run(Bench b, List<Results.Sustainable> out) throws Exception {
        int tasks = TableSetup.RELAY_TASKS;
        List<Contender> contenders = new ArrayList<>();
        contenders.add(b.relay(tasks, 1, null));
        if (b.options.debezium()) {
            contenders.add(b.debezium(null));
            contenders.add(b.debeziumTuned());
        }
        for (RelayVariant v : b.options.relayVariants()) {
            contenders.add(b.relay(tasks, v));
        }
        for (Contender c : contenders) {
            contender(b, c, out);
        }
    }

    /** Steps {@code c} through the rates; what it measured is added to {@code out} even when a step fails. */
    private static void contender(Bench b, Contender c, List<Results.Sustainable> out) throws Exception {
        BenchOptions.SustainableOptions o = b.options.sustainable();
        BenchDatabases.Db db = b.postgres.createDatabase("sustainable_" + c.kind());
        List<Results.SustainableStep> steps = new ArrayList<>();
        try {
            LatencyPhase.startStreaming(b, c, db);
            long idBase = 0;
            for (int rate : o.rates()) {
                PacedWriter writer = new PacedWriter(db, rate, o.warmupSeconds() + o.seconds(), idBase, o.connections(),
                    true);
                Results.Latency l = LatencyPhase.measure(b, c, writer, rate * o.warmupSeconds(),
                    Duration.ofSeconds(o.deliverySeconds()));
                idBase += writer.count();
                Results.SustainableStep step = SustainableRate.step(rate, l);
                steps.add(step);
                b.log("  %-34s step %,6d/s: %s", c.label(), rate, step.verdict());
                if (!SustainableRate.keepStepping(steps)) {
                    break;
                }
            }
        } finally {
            if (!steps.isEmpty()) {
                Results.Sustainable s = SustainableRate.summarize(c.label(), c.kind(), c.variant(), c.tasks(),
                    o.connections(), steps, o.rates().size());
                out.add(s);
                b.log("  %-34s sustainable rate %,d/s%s", c.label(), s.sustainableRate(),
                    s.heldEveryStep() ? " (held every step)" : "");
            }
            try {
                c.close();
            } finally {
                b.postgres.dropDatabase(db);
            }
        }
    }
}
