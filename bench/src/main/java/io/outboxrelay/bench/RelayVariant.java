package io.outboxrelay.bench;

import java.util.Map;
import java.util.regex.Pattern;

/**
 * A relay contender added from the command line ({@code --relay-variant=NAME=k=v[,k=v...]}): the relay with
 * these connector settings on top of its defaults (and of {@code --relay-config}). It runs beside the relay on
 * its defaults wherever that one runs with the same shape: the drain (2 tasks) and its rematch, latency
 * (1 task), sustainable (2 tasks), idle, writers and steady (2 tasks), unless it sets {@code tasks.max} itself:
 * then it runs that many tasks everywhere. The targets judge it under its own name.
 */
record RelayVariant(String name, Map<String, String> config) {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]*");
    static final String TASKS_MAX = "tasks.max";

    RelayVariant {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("--relay-variant: the name '" + name + "' must be letters, digits,"
                + " '.', '_' or '-' (it names topics and connectors)");
        }
        if (config.isEmpty()) {
            throw new IllegalArgumentException("--relay-variant=" + name + " sets nothing; give it connector settings,"
                + " e.g. --relay-variant=" + name + "=outbox.batch.size=500");
        }
        String tasksMax = config.get(TASKS_MAX);
        if (tasksMax != null && !tasksMax.trim().matches("[1-9][0-9]{0,2}")) {
            throw new IllegalArgumentException("--relay-variant=" + name + ": tasks.max=" + tasksMax
                + " must be a whole number from 1 to 999");
        }
        config = Map.copyOf(config);
    }

    /** The tasks this variant runs: its own {@code tasks.max} when it sets one, else the phase's. */
    int tasks(int phaseTasks) {
        return tasks(config, phaseTasks);
    }

    /** The tasks a relay with these connector settings runs: their {@code tasks.max} if any, else the phase's. */
    static int tasks(Map<String, String> settings, int phaseTasks) {
        String tasksMax = settings.get(TASKS_MAX);
        return tasksMax == null ? phaseTasks : Integer.parseInt(tasksMax.trim());
    }

    /** e.g. "relay 2 tasks, 1 sub, variant txn", with the variant's own task count when it sets one. */
    String label(int phaseTasks) {
        int tasks = tasks(phaseTasks);
        return "relay " + tasks + (tasks == 1 ? " task" : " tasks") + ", 1 sub, variant " + name;
    }

    /** The settings, sorted, for tables: "k=v, k=v". */
    String settings() {
        return String.join(", ", new java.util.TreeMap<>(config).entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue()).toList());
    }
}
