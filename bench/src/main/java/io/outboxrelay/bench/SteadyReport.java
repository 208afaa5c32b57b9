package io.outboxrelay.bench;

import java.util.List;

/** The steady phase's section of results.md: per workload and rate, each contender's CPU per event over the writers. */
final class SteadyReport {
    private static final int RELAY_TOP = 6;

    private SteadyReport() {
    }

    static void append(StringBuilder md, Results r, String chartPrefix) {
        if (r.steady.isEmpty()) {
            return;
        }
        md.append("## Steady rate: CPU per event over the writers alone\n\n");
        md.append(String.format("%s writer connections commit at a fixed rate (durable commits) for %s s unmeasured,"
                + " then %s s measured; workload `events`: one event per transaction, `events+%s-updates`: the event"
                + " and %s random rows of another table in the same commit, `hot-subject` (when run): one event per transaction,"
                + " all on one subject, so one relay task's share holds every row and the other tasks' shares none."
                + " Each step has a fresh database and starts"
                + " after a CHECKPOINT. A contender's *us/event* is its step's CPU per second minus the no-connector"
                + " step's (same workload and rate), over the events committed per second: what relaying costs on top"
                + " of the writers. *of writers' own* = its PostgreSQL us/event over the no-connector step's"
                + " PostgreSQL us per commit. *Delivered*: every event the step committed, seen by the consumer within"
                + " %s s after the schedule. *Statements/event*: the connector's top-level statements over the window"
                + " (pg_stat_statements), claims / stamps / wake-up / other; *nested*: statements inside functions"
                + " and triggers (the relay's trigger in each insert). With several rounds (each in its own order) a"
                + " contender's steps and the no-connector steps are pooled before the difference; each round's own"
                + " figure follows in brackets. Below each table, the same PostgreSQL CPU per event by who used it"
                + " (each server process named by pg_stat_activity; over the no-connector step's same kind): the"
                + " relay's own sessions, its LISTEN sessions, Debezium's walsender, what the writers' sessions used"
                + " beyond what they use alone (a busier machine makes their commits dearer too), autovacuum, processes"
                + " that exited in the window (autovacuum workers above all) and the other background processes.%n%n",
            r.volumes.get("steadyWriterConnections"), r.volumes.get("steadyWarmupSeconds"),
            r.volumes.get("steadySecondsPerStep"), r.volumes.get("steadyUpdatedRows"),
            r.volumes.get("steadyUpdatedRows"), r.volumes.get("steadyDeliverySeconds")));
        for (String workload : r.steady.stream().map(Results.SteadyStep::workload).distinct().toList()) {
            for (int rate : r.steady.stream().filter(s -> s.workload().equals(workload))
                .mapToInt(Results.SteadyStep::rate).distinct().sorted().toArray()) {
                table(md, r, workload, rate);
            }
        }
        md.append("![steady-rate CPU per event](").append(chartPrefix).append("steady.png)\n\n");
        relayStatements(md, r);
    }

    /** Each relay step's busiest statements of its own (not the writers'), for diagnosis. */
    private static void relayStatements(StringBuilder md, Results r) {
        md.append("**The relay's busiest statements per step** (pg_stat_statements over the window; mean ms is"
            + " execution time, waits included)\n\n| step | kind | statement | calls/event | mean ms | text |\n"
            + "|---|---|---|---|---|---|\n");
        for (Results.SteadyStep s : r.steady) {
            if (!s.kind().equals("relay")) {
                continue;
            }
            s.statements().top().stream().filter(t -> !StatementKinds.WRITERS.equals(t.get("kind"))).limit(RELAY_TOP)
                .forEach(t -> {
                    long calls = ((Number) t.get("calls")).longValue();
                    String text = t.get("query").toString();
                    md.append(String.format("| %s, %s @ %,d/s | %s | %s | %.2f | %.2f | `%s` |%n", s.label(),
                        s.workload(), s.rate(), t.get("kind"), t.get("name") == null ? "" : t.get("name"),
                        calls / (double) Math.max(1, s.windowCommits()),
                        ((Number) t.get("totalMs")).doubleValue() / Math.max(1, calls),
                        (text.length() > 80 ? text.substring(0, 80) + " ..." : text).replace("|", "\\|")));
                });
        }
        md.append('\n');
    }

    private static void table(StringBuilder md, Results r, String workload, int rate) {
        md.append(String.format("**`%s` at %,d events/s**%n%n", workload, rate));
        md.append("| step | writers commits/s (of the rate) | delivered | Postgres us/event | worker us/event | broker us/event |"
            + " total us/event | Postgres of writers' own | statements/event | claims / stamps / wake-up / other |"
            + " nested/event | other load (cores) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Results.SteadyStep s : r.steady) {
            if (s.workload().equals(workload) && s.rate() == rate && s.kind().equals("none")) {
                Results.Cpu c = s.cpu();
                md.append(String.format("| %s (per commit) | %,.0f (%.0f%%) | n/a | %.0f | %.0f | %.0f | %.0f |"
                        + " (reference) | | | %.2f | %.2f |%n", s.label(), s.achievedRate(), 100 * s.achievedRate() / rate,
                    c.postgresUsPerEvent(),
                    c.workerUsPerEvent(), c.brokerUsPerEvent(),
                    c.postgresUsPerEvent() + c.workerUsPerEvent() + c.brokerUsPerEvent(),
                    s.statements().calls(StatementKinds.NESTED) / (double) Math.max(1, s.windowCommits()),
                    c.othersCores()));
            }
        }
        for (Results.SteadyCost c : r.steadyCosts.stream().sorted(SteadyAccounting.BY_RATE_THEN_CONTENDER).toList()) {
            if (!c.workload().equals(workload) || c.rate() != rate) {
                continue;
            }
            List<String> kinds = StatementCounts.CONNECTOR_KINDS;
            md.append(String.format("| %s | %,.0f (%.0f%%) | %s | %.0f | %.0f | %.0f | **%.0f**%s | %.0f%%%s | %.2f | %s |"
                    + " %.2f | %.2f |%n", c.label(), c.achievedRate(), 100 * c.achievedRate() / rate, c.missing() == 0
                    ? "all"
                    : String.format("**%,d missing**", c.missing()), c.postgresUsPerEvent(), c.workerUsPerEvent(),
                c.brokerUsPerEvent(), c.totalUsPerEvent(), rounds(c.totalUsPerEventByRound(), "%.0f"),
                c.postgresShareOfWritersPct(), rounds(c.postgresShareOfWritersPctByRound(), "%.0f%%"),
                c.statementsPerEvent(),
                String.join(" / ", kinds.stream().map(k -> String.format("%.2f", c.statementsPerEventByKind()
                    .getOrDefault(k, 0.0))).toList()), c.statementsPerEventByKind()
                    .getOrDefault(StatementKinds.NESTED, 0.0), c.othersCores()));
        }
        md.append('\n');
        jit(md, r, workload, rate);
        sessions(md, r, workload, rate);
    }

    /**
     * What the worker's and the broker's JIT compilers still used in each setup's measured windows: included in the
     * figures above, and small once the steps were primed (SteadyPhase.prime).
     */
    private static void jit(StringBuilder md, Results r, String workload, int rate) {
        java.util.Map<String, List<Results.SteadyStep>> bySetup = new java.util.LinkedHashMap<>();
        for (Results.SteadyStep s : r.steady) {
            if (s.workload().equals(workload) && s.rate() == rate) {
                bySetup.computeIfAbsent(s.label(), k -> new java.util.ArrayList<>()).add(s);
            }
        }
        if (!bySetup.isEmpty()) {
            md.append("JIT compiling of the worker and the broker in these windows (included above), ms/s: ")
                .append(String.join("; ", bySetup.entrySet().stream().map(e -> String.format("%s %.1f", e.getKey(),
                    SteadyAccounting.pooled(e.getValue()).cpu().jitMsPerSecond())).toList()))
                .append(".\n\n");
        }
    }

    /** Each round's figure, in brackets after the pooled one; nothing with one round. */
    static String rounds(List<Double> byRound, String format) {
        return byRound.size() < 2 ? "" : " (" + String.join(", ", byRound.stream().map(v -> String.format(format, v))
            .toList()) + ")";
    }

    /** Where each contender's PostgreSQL CPU per event went, by session kind. */
    private static void sessions(StringBuilder md, Results r, String workload, int rate) {
        List<Results.SteadyCost> costs = r.steadyCosts.stream().filter(c -> c.workload().equals(workload)
            && c.rate() == rate && !c.postgresUsPerEventByKind().isEmpty()).sorted(SteadyAccounting.BY_RATE_THEN_CONTENDER)
            .toList();
        if (costs.isEmpty()) {
            return;
        }
        md.append("| PostgreSQL us/event by session | ").append(String.join(" | ", PostgresSessions.KINDS))
            .append(" | all |\n|---|").append("---|".repeat(PostgresSessions.KINDS.size() + 1)).append('\n');
        for (Results.SteadyCost c : costs) {
            md.append("| ").append(c.label()).append(" | ");
            md.append(String.join(" | ", PostgresSessions.KINDS.stream().map(k -> String.format("%.0f",
                c.postgresUsPerEventByKind().getOrDefault(k, 0.0))).toList()));
            md.append(String.format(" | %.0f |%n", c.postgresUsPerEvent()));
        }
        md.append('\n');
    }
}
