package io.outboxrelay.bench;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command line of the benchmark. Full volumes by default (about 70 minutes on 2 cores); {@code --quick}
 * shrinks every volume for a smoke test (about 14 minutes).
 */
record BenchOptions(boolean quick, Path home, Path out, Set<String> phases, boolean debezium, String workerHeap,
                    int drainEvents, int warmupEvents, List<Integer> latencyRates, int latencySeconds,
                    List<Integer> scaleBacklogs, int mentionMessages, int backlogTxnSize, boolean variants,
                    Map<String, String> relayConfig, List<RelayVariant> relayVariants, WriterOptions writers,
                    SustainableOptions sustainable, SteadyOptions steady, boolean help) {

    /**
     * The writer-ceiling phase ({@code seconds} measured per setup after {@code warmupSeconds}, {@code rounds}
     * times, with each count of {@code connections}), the idle phase ({@code idleSeconds} per setup), and the
     * wake-up candidates added with {@code --wakeup}.
     */
    record WriterOptions(int seconds, int warmupSeconds, int rounds, List<Integer> connections, int idleSeconds,
                         List<WakeupVariant> extraWakeups) {
    }

    /**
     * The sustainable-rate phase: the target rates stepped through, each run for {@code warmupSeconds} (not
     * counted) and then {@code seconds}, by {@code connections} writer connections; after a step's schedule
     * the consumer gets {@code deliverySeconds} to see every committed event.
     */
    record SustainableOptions(List<Integer> rates, int warmupSeconds, int seconds, int connections,
                              int deliverySeconds) {
    }

    /**
     * The steady-rate cost phase: each rate run for {@code warmupSeconds} (not measured) and then {@code seconds}
     * per step by {@code connections} writer connections; after a step's schedule the consumer gets
     * {@code deliverySeconds} to see every committed event. The second workload's transactions each also update
     * {@code updatedRows} rows of another table.
     */
    record SteadyOptions(List<Integer> rates, int warmupSeconds, int seconds, int connections, int deliverySeconds,
                         int updatedRows, int rounds, boolean hotSubject) {
    }

    /** The rates; quick mode keeps the two the targets judge. */
    static final List<Integer> STEADY_RATES = List.of(500, 1000, 2000);
    static final List<Integer> STEADY_RATES_QUICK = List.of(500, 2000);

    static final List<Integer> SUSTAINABLE_RATES = List.of(500, 1000, 2000, 3000, 5000, 7000, 10000, 14000, 20000);
    /** The writers phase's larger count: 4 connections cannot commit 5,000 durable transactions/s here. */
    static final int SUSTAINABLE_CONNECTIONS = 16;
    /** The steady phase's second workload: rows of another table each transaction updates (issue 23). */
    static final int STEADY_UPDATED_ROWS = 10;

    static final List<String> ALL_PHASES =
        List.of("warmup", "ceilings", "drain", "scale", "latency", "sustainable", "steady", "variants", "profile",
            "mentions", "idle", "writers");

    static final String USAGE = """
        usage: bench.sh [--quick] [--phases=a,b,...] [--no-debezium] [--out=DIR] [--worker-heap=1g]

          --quick            small volumes (20k-event drains, 10 s latency runs, 3 s writer runs), ~14 minutes
          --phases=LIST      run only these of: %s
          --no-debezium      skip the Debezium contender
          --out=DIR          where <timestamp>.json, results.md and the PNG charts go (default bench/results)
          --worker-heap=SIZE -Xms/-Xmx of the Connect worker JVM (default 1g)
          --relay-config=K=V,K=V  connector settings added to every relay contender, e.g.
                             --relay-config=outbox.batch.size=500,producer.override.linger.ms=0
          --wakeup=NAME=FILE[,K=V...]  one more wake-up for the writers and idle phases: FILE's SQL runs
                             after schemas/sql/outbox.sql, the relay gets K=V on top (repeatable)
          --relay-variant=NAME=K=V[,K=V...]  one more relay contender with these connector settings, beside
                             the relay on its defaults in the drain, latency, sustainable, idle and writers
                             phases, e.g. --relay-variant=strict=outbox.ordering=strict (repeatable)
          --sustainable-rates=LIST  the target rates (events/s) the sustainable phase steps through
                             (default %s)
          --steady-rates=LIST  the rates (events/s) of the steady-rate cost phase (default %s; quick %s)
          --steady-seconds=N  measured seconds per step of the steady phase (default 20; quick 4)
          --steady-updated-rows=N  rows of another table each transaction of the steady phase's second
                             workload updates (default 10; 0 leaves that workload out)
          --steady-hot-subject  one more workload in the steady phase: every event on one subject, so one
                             relay task's share holds them all and the other tasks' shares stay empty
                             (the relay and its variants only)
          --steady-rounds=N  times every step of the steady phase runs, each round in its own order; a
                             contender's cost pools its rounds and shows each one's (default 2; quick 1)
        """.formatted(String.join(",", ALL_PHASES), join(SUSTAINABLE_RATES), join(STEADY_RATES),
            join(STEADY_RATES_QUICK));

    private static String join(List<Integer> rates) {
        return String.join(",", rates.stream().map(String::valueOf).toList());
    }

    static BenchOptions parse(String[] args) {
        boolean quick = false;
        boolean debezium = true;
        boolean help = false;
        Path home = Path.of(System.getProperty("bench.home", ".")).toAbsolutePath().normalize();
        Path out = null;
        String heap = "1g";
        Set<String> phases = new LinkedHashSet<>(ALL_PHASES);
        Map<String, String> relayConfig = new LinkedHashMap<>();
        List<WakeupVariant> wakeups = new java.util.ArrayList<>();
        List<RelayVariant> relayVariants = new java.util.ArrayList<>();
        List<Integer> sustainableRates = SUSTAINABLE_RATES;
        List<Integer> steadyRates = null;
        Integer steadySeconds = null;
        Integer steadyUpdatedRows = null;
        Integer steadyRounds = null;
        boolean steadyHotSubject = false;
        for (String a : args) {
            if (a.equals("--quick")) {
                quick = true;
            } else if (a.equals("--no-debezium")) {
                debezium = false;
            } else if (a.equals("--help") || a.equals("-h")) {
                help = true;
            } else if (a.startsWith("--phases=")) {
                phases = new LinkedHashSet<>(List.of(a.substring("--phases=".length()).split(",")));
                for (String p : phases) {
                    if (!ALL_PHASES.contains(p)) {
                        throw new IllegalArgumentException("unknown phase '" + p + "'");
                    }
                }
            } else if (a.startsWith("--out=")) {
                out = Path.of(a.substring("--out=".length())).toAbsolutePath();
            } else if (a.startsWith("--relay-config=")) {
                relayConfig.putAll(pairs("--relay-config", a.substring("--relay-config=".length()).split(",")));
                if (relayConfig.containsKey(RelayVariant.TASKS_MAX)) {
                    throw new IllegalArgumentException("--relay-config cannot set tasks.max: every phase sets its"
                        + " contenders' tasks; run more tasks as a variant, e.g. --relay-variant=t8=tasks.max=8");
                }
            } else if (a.startsWith("--wakeup=")) {
                String[] parts = a.substring("--wakeup=".length()).split(",");
                Map<String, String> nameAndFile = pairs("--wakeup", new String[] {parts[0]});
                String name = nameAndFile.keySet().iterator().next();
                wakeups.add(WakeupVariant.fromFile(name, Path.of(nameAndFile.get(name)).toAbsolutePath(),
                    pairs("--wakeup", java.util.Arrays.copyOfRange(parts, 1, parts.length))));
            } else if (a.startsWith("--relay-variant=")) {
                relayVariants.add(relayVariant(a.substring("--relay-variant=".length())));
            } else if (a.startsWith("--sustainable-rates=")) {
                sustainableRates = rates("--sustainable-rates", a.substring("--sustainable-rates=".length()));
            } else if (a.startsWith("--steady-rates=")) {
                steadyRates = rates("--steady-rates", a.substring("--steady-rates=".length()));
            } else if (a.startsWith("--steady-seconds=")) {
                steadySeconds = positive("--steady-seconds", a.substring("--steady-seconds=".length()));
            } else if (a.startsWith("--steady-rounds=")) {
                steadyRounds = positive("--steady-rounds", a.substring("--steady-rounds=".length()));
            } else if (a.equals("--steady-hot-subject")) {
                steadyHotSubject = true;
            } else if (a.startsWith("--steady-updated-rows=")) {
                steadyUpdatedRows = Integer.parseInt(a.substring("--steady-updated-rows=".length()));
            } else if (a.startsWith("--worker-heap=")) {
                heap = a.substring("--worker-heap=".length());
            } else {
                throw new IllegalArgumentException("unknown option '" + a + "'");
            }
        }
        if (out == null) {
            out = home.resolve("bench").resolve("results");
        }
        checkNames(wakeups, relayVariants);
        if (quick) {
            return new BenchOptions(true, home, out, phases, debezium, heap, 20_000, 5_000, List.of(1000, 5000), 10,
                List.of(5_000, 20_000, 50_000), 2_000, 100, false, relayConfig, List.copyOf(relayVariants),
                new WriterOptions(3, 1, 1, List.of(4, 16), 5, wakeups),
                new SustainableOptions(sustainableRates, 1, 4, SUSTAINABLE_CONNECTIONS, 5),
                new SteadyOptions(steadyRates != null ? steadyRates : STEADY_RATES_QUICK, 1,
                    steadySeconds != null ? steadySeconds : 4, SUSTAINABLE_CONNECTIONS, 5,
                    steadyUpdatedRows != null ? steadyUpdatedRows : STEADY_UPDATED_ROWS,
                    steadyRounds != null ? steadyRounds : 1, steadyHotSubject), help);
        }
        return new BenchOptions(false, home, out, phases, debezium, heap, 200_000, 50_000, List.of(1000, 5000), 60,
            List.of(20_000, 200_000, 1_000_000), 20_000, 100, true, relayConfig, List.copyOf(relayVariants),
            new WriterOptions(10, 2, 2, List.of(4, 16), 20, wakeups),
            new SustainableOptions(sustainableRates, 3, 15, SUSTAINABLE_CONNECTIONS, 15),
            new SteadyOptions(steadyRates != null ? steadyRates : STEADY_RATES, 3, steadySeconds != null ? steadySeconds
                : 20, SUSTAINABLE_CONNECTIONS, 15, steadyUpdatedRows != null ? steadyUpdatedRows : STEADY_UPDATED_ROWS,
                steadyRounds != null ? steadyRounds : 2, steadyHotSubject),
            help);
    }

    /** {@code NAME=k=v[,k=v...]}. */
    static RelayVariant relayVariant(String spec) {
        int eq = spec.indexOf('=');
        if (eq <= 0 || eq == spec.length() - 1) {
            throw new IllegalArgumentException("--relay-variant wants NAME=key=value[,key=value...], got '" + spec
                + "'");
        }
        return new RelayVariant(spec.substring(0, eq), pairs("--relay-variant", spec.substring(eq + 1).split(",")));
    }

    private static List<Integer> rates(String option, String list) {
        List<Integer> out = new java.util.ArrayList<>();
        for (String s : list.split(",")) {
            int r;
            try {
                r = Integer.parseInt(s.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + " wants events/s like 500,1000,2000, got '" + s + "'");
            }
            if (r <= 0 || (!out.isEmpty() && r <= out.get(out.size() - 1))) {
                throw new IllegalArgumentException(option + " must rise and be positive, got " + list);
            }
            out.add(r);
        }
        return List.copyOf(out);
    }

    private static int positive(String option, String value) {
        try {
            int n = Integer.parseInt(value.trim());
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IllegalArgumentException(option + " wants a positive number of seconds, got '" + value + "'");
    }

    /**
     * Wake-ups and relay variants both name a relay setup of the writers and idle phases ("relay-NAME"): each
     * name once, and none of the built-in wake-ups'.
     */
    private static void checkNames(List<WakeupVariant> wakeups, List<RelayVariant> variants) {
        Set<String> seen = new java.util.HashSet<>(Set.of(WakeupVariant.SHIPPED.name(), WakeupVariant.LEGACY.name(),
            WakeupVariant.POLLING.name()));
        List<String> names = new java.util.ArrayList<>(wakeups.stream().map(WakeupVariant::name).toList());
        variants.forEach(v -> names.add(v.name()));
        for (String n : names) {
            if (!seen.add(n)) {
                throw new IllegalArgumentException("the name '" + n + "' is used twice (or is a built-in wake-up's:"
                    + " shipped, legacy, polling); give each --wakeup and --relay-variant a name of its own");
            }
        }
    }

    /** {@code key=value} items of an option, in order. */
    private static Map<String, String> pairs(String option, String[] items) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String kv : items) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(option + " wants key=value pairs, got '" + kv + "'");
            }
            out.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return out;
    }

    boolean runs(String phase) {
        return phases.contains(phase);
    }
}
