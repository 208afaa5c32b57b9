package io.outboxrelay.bench;

import java.util.List;
import java.util.Map;

/** results.md: the tables of a run, with the targets first. */
final class Report {
    private Report() {
    }

    static String markdown(Results r, String stamp, String chartPrefix) {
        return markdown(r, stamp, chartPrefix, "../README.md");
    }

    /** @param readme the link to bench/README.md from where the report is written */
    static String markdown(Results r, String stamp, String chartPrefix, String readme) {
        StringBuilder md = new StringBuilder();
        md.append("# Outbox relay benchmark: ").append(stamp).append("\n\n");
        md.append("Mode: **").append(r.environment.get("mode")).append("**, total ")
            .append(String.format("%.0f s (%.1f min)", r.totalSeconds, r.totalSeconds / 60)).append(". ");
        md.append("Machine: ").append(r.environment.get("cpus")).append(" cores, ")
            .append(r.environment.get("os")).append(", Java ").append(r.environment.get("java")).append(". ");
        md.append("PostgreSQL ").append(r.environment.get("postgres")).append(", Kafka ")
            .append(r.environment.get("kafka")).append(" (1 broker, a JVM of its own), one Connect worker JVM (heap ")
            .append(r.environment.get("workerHeap")).append("), Debezium ").append(r.environment.get("debezium"))
            .append(". Method and meaning of every number: [bench/README.md](").append(readme).append(").\n\n");
        md.append("Durability: PostgreSQL reports ").append(r.environment.get("postgresDurability"))
            .append(", data directory on ").append(r.environment.get("postgresDataFileSystem")).append(".\n\n");
        md.append("Raw numbers: `").append(stamp).append(".json`.").append(code(r)).append("\n\n");
        priming(md, r);

        if (!r.targets.isEmpty()) {
            md.append("## Targets\n\n| target | goal | measured | met |\n|---|---|---|---|\n");
            for (Results.Target t : r.targets) {
                md.append("| ").append(t.name()).append(" | ").append(t.goal()).append(" | ").append(t.measured())
                    .append(" | ").append(t.met() == null ? "n/a" : t.met() ? "yes" : "**no**").append(" |\n");
            }
            md.append('\n');
        }

        writers(md, r);
        idle(md, r);
        double lowerCeiling1 = lowerCeiling(r, 1);
        double lowerCeiling2 = lowerCeiling(r, 2);
        // Debezium's best warm round, as the drain target uses
        double dbz = r.drains.stream().filter(d -> d.kind().equals("debezium")).mapToDouble(Results.Drain::eventsPerSec)
            .max().orElse(Double.NaN);
        if (!r.drains.isEmpty()) {
            md.append("## Drain (warm worker): backlog committed first, then the connector started\n\n");
            md.append("Time from starting the connector (relay: creating it; Debezium: resuming it) until the last"
                + " record is visible to a consumer.\n\n");
            drainTable(md, r.drains, dbz, lowerCeiling1, lowerCeiling2);
            md.append("\n![throughput](").append(chartPrefix).append("throughput.png)\n\n");
        }
        if (!r.coldDrains.isEmpty()) {
            double dbzCold = r.coldDrains.stream().filter(d -> d.kind().equals("debezium"))
                .mapToDouble(Results.Drain::eventsPerSec).findFirst().orElse(Double.NaN);
            md.append("## Cold drains (warm-up: each contender's first drain in the worker JVM)\n\n");
            drainTable(md, r.coldDrains, dbzCold, lowerCeiling1, lowerCeiling2);
            md.append('\n');
        }
        if (!r.variants.isEmpty()) {
            md.append("## Tuning variants (connector/producer settings only, same drain)\n\n");
            drainTable(md, r.variants, dbz, lowerCeiling1, lowerCeiling2);
            md.append('\n');
        }
        if (!r.latency.isEmpty()) {
            md.append("## Steady latency: commit to consumer receive\n\n");
            md.append("Each contender running and idle, then one event per transaction on a fixed schedule from ")
                .append(PacedWriter.CONNECTIONS).append(" writer connections (the probe: 1), for ")
                .append(r.volumes.get("latencySeconds")).append(" s per rate (the variants' runs: shorter).\n\n");
            md.append("| contender | rate (events/s) | sent | received | p50 ms | p95 ms | p99 ms | p99.9 ms | max ms |"
                + " mean ms | commit->broker p50 / p99 ms | worker CPU us/event | other load (cores) |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (Results.Latency l : r.latency) {
                md.append(String.format("| %s | %,d (achieved %,.0f) | %,d | %,d | %.1f | %.1f | %.1f | %.1f | %.1f |"
                        + " %.1f | %.0f / %.0f | %.0f | %.2f |%n", l.label(), l.rate(), l.achievedRate(), l.sent(),
                    l.received(), l.p50Ms(), l.p95Ms(), l.p99Ms(), l.p999Ms(), l.maxMs(), l.meanMs(), l.toBrokerP50Ms(),
                    l.toBrokerP99Ms(), l.cpu().workerUsPerEvent(),
                    l.cpu().othersCores()));
            }
            md.append("\n![latency CDF](").append(chartPrefix).append("latency-cdf.png)\n\n");
        }
        sustainable(md, r, chartPrefix);
        SteadyReport.append(md, r, chartPrefix);
        if (!r.ceilings.isEmpty()) {
            md.append("## Ceilings (each half alone, same broker, same database)\n\n| ceiling | count | time s | rate | settings |\n"
                + "|---|---|---|---|---|\n");
            for (Results.Ceiling c : r.ceilings) {
                md.append(String.format("| %s | %,d | %.2f | **%,.0f %s** | %s |%n", c.name(), c.count(), c.seconds(),
                    c.perSec(), c.unit(), c.settings()));
            }
            md.append('\n');
        }
        if (!r.scale.isEmpty()) {
            md.append("## Scale: drain time and worker heap by backlog\n\n");
            md.append("| contender | backlog | time s | events/s | us per event (wall) | first record ms |"
                + " live heap mid-drain MB | max heap after GC MB | peak heap used MB | GCs | allocated KB/event |"
                + " other load (cores) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (Results.Drain d : r.scale) {
                md.append(String.format("| %s | %,d | %.2f | %,.0f | %.1f | %,.0f | %.1f | %.1f | %.1f | %d | %.2f | %.2f |%n",
                    d.label(), d.events(), d.seconds(), d.eventsPerSec(), d.seconds() * 1e6 / d.events(),
                    d.firstRecordAfterMs(), d.heap().liveMidDrainMb(), d.heap().maxAfterGcMb(), d.heap().peakUsedMb(),
                    d.heap().collections(), d.heap().allocatedKbPerEvent(), d.cpu().othersCores()));
            }
            md.append("\n![scale](").append(chartPrefix).append("scale.png)\n\n");
        }
        if (r.mentions != null) {
            Results.Mentions m = r.mentions;
            md.append("## Mention recovery\n\n");
            md.append(String.format("%,d unrouted messages (each owed to an offline agent) recovered in **%.2f s**"
                    + " (%,.0f messages/s; first record after %.0f ms; %,d records, %,d owed rows).%n%n", m.messages(),
                m.seconds(), m.messagesPerSec(), m.firstRecordAfterMs(), m.records(), m.owedRows()));
        }
        for (Results.Profile p : r.profiles) {
            profile(md, p);
        }
        md.append("## Phases\n\n| phase | seconds | error |\n|---|---|---|\n");
        r.phaseSeconds.forEach((k, v) -> md.append(String.format("| %s | %.0f | %s |%n", k, v,
            r.phaseErrors.getOrDefault(k, ""))));
        return md.toString();
    }

    private static void drainTable(StringBuilder md, List<Results.Drain> drains, double dbz, double ceil1,
                                   double ceil2) {
        md.append("| contender | phase | events | records | time s | events/s | records/s | x Debezium |"
            + " of lower ceiling | first record ms | events/s after first record | worker us/ev | Postgres us/ev | broker us/ev |"
            + " bench us/ev | live heap MB | alloc KB/ev | other load (cores) | settings |\n"
            + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Results.Drain d : drains) {
            double ceiling = d.tasks() >= 2 ? ceil2 : ceil1;
            String ofCeiling = d.kind().equals("relay") && d.subscriptions() == 1 && !Double.isNaN(ceiling)
                ? String.format("%.0f%%", 100 * d.eventsPerSec() / (ceiling / 1.0)) : "";
            String vsDbz = d.kind().equals("relay") && !Double.isNaN(dbz) ? String.format("%.2f", d.eventsPerSec() / dbz)
                : "";
            md.append(String.format("| %s | %s | %,d | %,d | %.2f | **%,.0f** | %,.0f | %s | %s | %.0f | %,.0f | %.0f |"
                    + " %.0f | %.0f | %.0f | %.0f | %.1f | %.2f | %s |%n", d.label(), d.phase(), d.events(), d.records(),
                d.seconds(), d.eventsPerSec(), d.recordsPerSec(), vsDbz, ofCeiling, d.firstRecordAfterMs(),
                d.steadyEventsPerSec(), d.cpu().workerUsPerEvent(), d.cpu().postgresUsPerEvent(),
                d.cpu().brokerUsPerEvent(), d.cpu().benchUsPerEvent(),
                d.heap().liveMidDrainMb(), d.heap().allocatedKbPerEvent(), d.cpu().othersCores(),
                d.overrides().isEmpty() ? "defaults" : d.overrides().toString()));
        }
    }

    private static void sustainable(StringBuilder md, Results r, String chartPrefix) {
        if (r.sustainable.isEmpty()) {
            return;
        }
        md.append("## Sustainable rate: the highest step each contender holds\n\n");
        md.append(String.format("Each contender running and streaming; %s writer connections commit one event per"
                + " transaction (durable commits) at each target rate in turn: %s s unmeasured, then %s s measured."
                + " A step holds when the writers commit >= %.0f%% of the target, every event they committed is"
                + " visible within %s s after the schedule, and commit-to-consumer p99 <= %.0f ms. Stepping stops at"
                + " the second failed step, or at a failed step whose failure was not the latency alone.%n%n",
            r.volumes.get("sustainableWriterConnections"), r.volumes.get("sustainableWarmupSeconds"),
            r.volumes.get("sustainableSecondsPerStep"), 100 * SustainableRate.MIN_ACHIEVED,
            r.volumes.get("sustainableDeliverySeconds"), SustainableRate.MAX_P99_MS));
        md.append(String.format("| contender | tasks | writer connections | steps run | sustainable rate | p99 <= %.0f ms"
            + " at every step up to it |%n|---|---|---|---|---|---|%n", SustainableRate.MAX_P99_MS));
        for (Results.Sustainable s : r.sustainable) {
            md.append(String.format("| %s | %d | %d | %s | **%s** | %s |%n", s.label(), s.tasks(), s.connections(),
                String.join(", ", s.steps().stream().map(st -> String.format("%,d", st.targetRate())).toList()),
                Targets.rateText(s), s.sustainableRate() == 0 ? "n/a" : s.tailHeld() ? "yes" : "**no**"));
        }
        md.append("\n| contender | target /s | achieved commits/s | of target | sent | received | p50 ms | p99 ms |"
            + " max ms | commit->broker p99 ms | worker us/event | Postgres us/event | other load (cores) | step |\n"
            + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Results.Sustainable s : r.sustainable) {
            for (Results.SustainableStep st : s.steps()) {
                Results.Latency l = st.latency();
                md.append(String.format("| %s | %,d | %,.0f | %.0f%% | %,d | %,d | %.1f | %.1f | %.1f | %.0f | %.0f |"
                        + " %.0f | %.2f | %s |%n", s.label(), st.targetRate(), l.achievedRate(),
                    100 * l.achievedRate() / st.targetRate(), l.sent(), l.received(), l.p50Ms(), l.p99Ms(), l.maxMs(),
                    l.toBrokerP99Ms(), l.cpu().workerUsPerEvent(), l.cpu().postgresUsPerEvent(),
                    l.cpu().othersCores(), st.holds() ? "holds" : "**fails**: " + st.verdict()));
            }
        }
        md.append("\n![sustainable rate](").append(chartPrefix).append("sustainable.png)\n\n");
    }

    private static void writers(StringBuilder md, Results r) {
        if (r.writerCases.isEmpty()) {
            return;
        }
        md.append("## Writer ceiling: durable single-event commits/s\n\n");
        md.append("Each writer connection commits one event per transaction (autocommit INSERT) as fast as it can, on"
            + " a fresh empty table, for ").append(r.volumes.get("writerSecondsPerMeasurement"))
            .append(" s after a ").append(r.volumes.get("writerWarmupSeconds")).append(" s warm-up; ")
            .append(r.volumes.get("writerRounds")).append(" round(s), setups in reverse order in even rounds."
                + " Ratios are taken round by round (mean, range).\n\n");
        md.append("| setup | writers | commits/s | range | x PK-only | x Debezium | Postgres us/commit |"
            + " worker us/commit | max other load (cores) |\n|---|---|---|---|---|---|---|---|---|\n");
        for (Results.WriterCase c : r.writerCases.stream()
            .sorted(java.util.Comparator.comparingInt(Results.WriterCase::connections)).toList()) {
            md.append(String.format("| %s | %d | **%,.0f** | %,.0f-%,.0f | %s | %s | %.0f | %.0f | %.2f |%n", c.label(),
                c.connections(), c.commitsPerSec(), c.minPerSec(), c.maxPerSec(), ratio(c.xPkOnly()),
                ratio(c.xDebezium()), c.postgresUsPerCommit(), c.workerUsPerCommit(), c.maxOtherCores()));
        }
        md.append('\n');
    }

    private static String ratio(Results.Ratio x) {
        if (Double.isNaN(x.mean())) {
            return "";
        }
        return x.min() == x.max() ? String.format("%.2f", x.mean())
            : String.format("%.2f (%.2f-%.2f)", x.mean(), x.min(), x.max());
    }

    private static void idle(StringBuilder md, Results r) {
        if (r.idle.isEmpty()) {
            return;
        }
        md.append("## Idle cost: CPU with no writes\n\n| setup | tasks | seconds | worker CPU ms/s | Postgres CPU"
            + " ms/s | per task over the floor: worker / Postgres ms/s | other load (cores) |\n"
            + "|---|---|---|---|---|---|---|\n");
        for (Results.Idle i : r.idle) {
            md.append(String.format("| %s | %d | %.0f | %.1f | %.1f | %s | %.2f |%n", i.label(), i.tasks(), i.seconds(),
                i.workerMsPerSec(), i.postgresMsPerSec(), i.tasks() == 0 ? "(the floor)"
                    : String.format("%.1f / %.1f", i.workerMsPerSecPerTask(), i.postgresMsPerSecPerTask()),
                i.othersCores()));
        }
        md.append('\n');
    }

    /**
     * The lower of the producer ceiling (records/s, per event for one subscription) and the SQL ceiling with
     * {@code clients} claimers, in events/s; NaN when not measured.
     */
    static double lowerCeiling(Results r, int clients) {
        double producer = r.ceilings.stream().filter(c -> c.name().startsWith("producer, relay records, Connect"))
            .mapToDouble(Results.Ceiling::perSec).findFirst().orElse(Double.NaN);
        double sql = r.ceilings.stream().filter(c -> c.name().startsWith("SQL claim+stamp, " + clients + " client")
                && c.name().endsWith("batch 200")).mapToDouble(Results.Ceiling::perSec).findFirst().orElse(Double.NaN);
        if (Double.isNaN(producer)) {
            return sql;
        }
        return Double.isNaN(sql) ? producer : Math.min(producer, sql);
    }

    @SuppressWarnings("unchecked")
    private static void profile(StringBuilder md, Results.Profile p) {
        md.append("## Profile: ").append(p.label()).append(String.format(", %,d events in %.2f s (%,.0f events/s with"
            + " JFR on)%n%n", p.events(), p.seconds(), p.eventsPerSec()));
        md.append(String.format("CPU per event: worker %.0f us, PostgreSQL %.0f us, broker %.0f us, bench %.0f us. JFR"
            + " file: `%s` (%s execution samples).%n%n", p.cpu().workerUsPerEvent(), p.cpu().postgresUsPerEvent(),
            p.cpu().brokerUsPerEvent(), p.cpu().benchUsPerEvent(), p.jfrFile(), p.jfr().get("samples")));
        section(md, "Worker CPU by component (inclusive: a sample counts for every component on its stack)",
            (List<Map<String, Object>>) p.jfr().get("components"), "samples");
        section(md, "Worker CPU by thread", (List<Map<String, Object>>) p.jfr().get("threads"), "samples");
        section(md, "Hottest leaf methods (self time)", (List<Map<String, Object>>) p.jfr().get("topSelf"), "samples");
        section(md, "Relay methods (inclusive)", (List<Map<String, Object>>) p.jfr().get("topRelayFrames"), "samples");
        section(md, "Allocation sites (first non-JDK frame; sampled bytes of the task and producer threads)",
            (List<Map<String, Object>>) p.jfr().get("allocationSites"), "bytes");
        if (!p.sqlStatements().isEmpty()) {
            md.append("**PostgreSQL statements (pg_stat_statements, this drain)**\n\n| calls | total ms | mean ms | rows |"
                + " statement |\n|---|---|---|---|---|\n");
            for (Map<String, Object> s : p.sqlStatements()) {
                md.append(String.format("| %,d | %,.1f | %.3f | %,d | `%s` |%n", (Long) s.get("calls"),
                    (Double) s.get("totalMs"), (Double) s.get("meanMs"), (Long) s.get("rows"),
                    s.get("query").toString().replace("|", "\\|")));
            }
            md.append('\n');
        }
    }

    private static void section(StringBuilder md, String title, List<Map<String, Object>> rows, String unit) {
        if (rows == null || rows.isEmpty()) {
            return;
        }
        md.append("**").append(title).append("**\n\n| ").append(unit).append(" | % | name |\n|---|---|---|\n");
        for (Map<String, Object> row : rows) {
            md.append(String.format("| %,d | %s | `%s` |%n", ((Number) row.get(unit)).longValue(), row.get("percent"),
                row.get("name")));
        }
        md.append('\n');
    }

    /** Each phase's priming per contender: runs, what the compilers used in the last one, and a budget that ran out. */
    private static void priming(StringBuilder md, Results r) {
        if (r.priming.isEmpty()) {
            return;
        }
        java.util.Map<String, Results.Priming> last = new java.util.LinkedHashMap<>();
        r.priming.forEach(p -> last.put(p.phase() + ": " + p.contender(), p));
        md.append("Priming (unmeasured runs until the worker's and the broker's JIT compilers used <= ")
            .append(String.format("%.0f", Bench.PRIMED_JIT_MS_PER_S)).append(" ms/s in two runs in a row): ")
            .append(String.join("; ", last.entrySet().stream().map(e -> String.format("%s %d run(s), last %.1f ms/s%s",
                e.getKey(), e.getValue().run(), e.getValue().jitMsPerSecond(), e.getValue().budgetSpent()
                    ? " (**budget ran out**)" : "")).toList()))
            .append(".\n\n");
    }

    /** The git commit the run measured and how many files differed from it; nothing when git could not tell. */
    private static String code(Results r) {
        Object commit = r.environment.get("gitCommit");
        return commit == null || commit.toString().isEmpty() ? "" : " Code: `" + commit + "`, "
            + r.environment.get("gitUncommittedFiles") + " file(s) uncommitted.";
    }
}
