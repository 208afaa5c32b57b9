package io.outboxrelay.bench;

import java.util.Map;

/**
 * The relay with exactly-once delivery (issue 25): a worker of its own with
 * {@code exactly.once.source.support=enabled} (exactly-once is worker-wide: on the benchmark's worker it would
 * run every other contender in transactions too), the connector with {@code exactly.once.support=required} and
 * the default {@code transaction.boundary=poll}, and a {@code read_committed} consumer, which sees a record only
 * once its transaction committed. It runs in the drain (1 and 2 tasks) and latency phases, beside the relay on
 * its defaults; the targets report its cost as information.
 */
final class ExactlyOnce {
    static final String VARIANT = "exactly-once";
    /** What the contender's connector adds to the relay's defaults. */
    static final Map<String, String> CONNECTOR = Map.of("exactly.once.support", "required");
    /** What its worker adds to {@link MeasuredWorker#workerProps}: the broker already has the transaction log settings. */
    static final Map<String, String> WORKER = Map.of("exactly.once.source.support", "enabled");

    private ExactlyOnce() {
    }

    static String label(int tasks) {
        return "relay " + tasks + (tasks == 1 ? " task" : " tasks") + ", 1 sub, exactly-once";
    }

    /** The cost of exactly-once, beside the relay on its defaults, for each measurement both made. */
    static void targets(Results r) {
        for (int tasks : new int[] {1, 2}) {
            Results.Drain plain = Targets.find(r.drains, "relay", tasks, 1, "");
            Results.Drain eos = Targets.find(r.drains, "relay", tasks, 1, VARIANT);
            if (plain != null && eos != null) {
                r.targets.add(new Results.Target("exactly-once cost: drain, " + tasks + (tasks == 1 ? " task" : " tasks")
                    + " (info)", "events/s with exactly-once over the default relay's, same backlog",
                    String.format("%.2fx the default relay (%,.0f vs %,.0f events/s)",
                        eos.eventsPerSec() / plain.eventsPerSec(), eos.eventsPerSec(), plain.eventsPerSec()), null));
            }
        }
        Results.Latency plain = latency(r, "");
        Results.Latency eos = latency(r, VARIANT);
        if (plain != null && eos != null) {
            r.targets.add(new Results.Target("exactly-once cost: latency at 1,000/s (info)",
                "commit-to-consumer latency with exactly-once, beside the default relay's",
                String.format("p99 %.1f ms vs %.1f ms, p50 %.1f vs %.1f ms (read_committed consumer)", eos.p99Ms(),
                    plain.p99Ms(), eos.p50Ms(), plain.p50Ms()), null));
        }
    }

    private static Results.Latency latency(Results r, String variant) {
        return r.latency.stream().filter(l -> l.kind().equals("relay") && l.rate() == 1000
            && l.variant().equals(variant)).findFirst().orElse(null);
    }
}
