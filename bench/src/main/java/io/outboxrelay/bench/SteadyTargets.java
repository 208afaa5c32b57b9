package io.outboxrelay.bench;

import java.util.List;

/**
 * Issue 23's done-when checks on the steady phase, at {@link #RATES}, for the relay (2 tasks, defaults) and each
 * {@code --relay-variant}: its total CPU per event at most the tuned Debezium's, and its PostgreSQL CPU per event at
 * most {@link #MAX_SHARE_OF_WRITERS_PCT} of what the writers' own commits cost PostgreSQL. Judged on the
 * one-event workload; the same checks on the other workloads (updated rows, one hot subject) are shown as information.
 */
final class SteadyTargets {
    static final List<Integer> RATES = List.of(500, 2000);
    static final double MAX_SHARE_OF_WRITERS_PCT = 25;

    private SteadyTargets() {
    }

    static void evaluate(Results r) {
        for (String workload : r.steadyCosts.stream().map(Results.SteadyCost::workload).distinct().toList()) {
            boolean judged = workload.equals(SteadyPhase.Workload.EVENTS.key());
            for (Results.SteadyCost relay : r.steadyCosts) {
                if (relay.kind().equals("relay") && relay.workload().equals(workload)
                    && RATES.contains(relay.rate())) {
                    add(r, relay, tuned(r, relay), judged);
                }
            }
        }
    }

    private static Results.SteadyCost tuned(Results r, Results.SteadyCost relay) {
        return r.steadyCosts.stream().filter(c -> c.kind().equals("debezium")
                && c.variant().equals(DebeziumContender.TUNED_VARIANT) && c.workload().equals(relay.workload())
                && c.rate() == relay.rate()).findFirst().orElse(null);
    }

    private static void add(Results r, Results.SteadyCost relay, Results.SteadyCost tuned, boolean judged) {
        String at = String.format(" at %,d/s%s%s", relay.rate(), Targets.variantSuffix(relay.variant()),
            judged ? "" : " (" + relay.workload() + ", info)");
        String missing = (relay.missing() == 0 ? "" : String.format("; %,d events not delivered", relay.missing()))
            + (relay.achievedRate() >= 0.95 * relay.rate() ? "" : String.format("; writers at %.0f%% of the rate",
                100 * relay.achievedRate() / relay.rate()))
            + String.format("; other load %.2f cores", relay.othersCores());
        if (tuned != null) {
            r.targets.add(new Results.Target("steady: CPU per event vs Debezium tuned" + at, "the relay's PostgreSQL +"
                + " worker + broker CPU per event, each over the writers alone, <= Debezium's with poll.interval.ms=10"
                + " (same run and rate, 16 writer connections, durable commits), every event delivered",
                String.format("%.0f vs %.0f us (Postgres %.0f + worker %.0f + broker %.0f vs %.0f + %.0f + %.0f)%s",
                    relay.totalUsPerEvent(), tuned.totalUsPerEvent(), relay.postgresUsPerEvent(),
                    relay.workerUsPerEvent(), relay.brokerUsPerEvent(), tuned.postgresUsPerEvent(),
                    tuned.workerUsPerEvent(), tuned.brokerUsPerEvent(), missing),
                judged ? relay.missing() == 0 && relay.totalUsPerEvent() <= tuned.totalUsPerEvent() : null));
        }
        r.targets.add(new Results.Target("steady: PostgreSQL CPU vs the writers' own" + at, String.format("the relay's"
                + " PostgreSQL CPU per event <= %.0f%% of the writers' own PostgreSQL CPU per commit (the no-connector"
                + " step's), every event delivered", MAX_SHARE_OF_WRITERS_PCT),
            String.format("%.0f%% (%.0f us per event vs %.0f us per commit)%s", relay.postgresShareOfWritersPct(),
                relay.postgresUsPerEvent(), relay.writersPostgresUsPerCommit(), missing),
            judged ? relay.missing() == 0 && relay.postgresShareOfWritersPct() <= MAX_SHARE_OF_WRITERS_PCT : null));
    }
}
