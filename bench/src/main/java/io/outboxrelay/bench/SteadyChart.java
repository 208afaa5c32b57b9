package io.outboxrelay.bench;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.CategoryChart;

/**
 * {@code steady.png}: per workload, one bar per contender and rate, the CPU per relayed event over the writers alone,
 * stacked by component (PostgreSQL, worker, broker). A difference below zero (noise under the no-connector step) is
 * drawn as zero; the tables give the numbers.
 */
final class SteadyChart {
    static final Color POSTGRES = new Color(0x336791);
    static final Color WORKER = new Color(0xff7f0e);
    static final Color BROKER = new Color(0x2ca02c);

    private SteadyChart() {
    }

    static void draw(Results r, Path file) throws IOException {
        List<CategoryChart> panels = new ArrayList<>();
        for (String workload : r.steadyCosts.stream().map(Results.SteadyCost::workload).distinct().toList()) {
            List<Results.SteadyCost> costs = r.steadyCosts.stream().filter(c -> c.workload().equals(workload))
                .sorted(SteadyAccounting.BY_RATE_THEN_CONTENDER).toList();
            List<String> names = Charts.unique(costs.stream().map(c -> String.format("%s @ %,d/s", shortName(c),
                c.rate())).toList());
            CategoryChart chart = Charts.bars(Math.max(700, 70 * names.size() + 200), 420 + Charts.labelsHeight(names),
                "CPU per event over the writers alone: " + workload, "us of CPU per relayed event");
            chart.getStyler().setOverlapped(false);
            chart.getStyler().setStacked(true);
            stack(chart, "PostgreSQL", names, costs, Results.SteadyCost::postgresUsPerEvent, POSTGRES);
            stack(chart, "Connect worker", names, costs, Results.SteadyCost::workerUsPerEvent, WORKER);
            stack(chart, "broker", names, costs, Results.SteadyCost::brokerUsPerEvent, BROKER);
            panels.add(chart);
        }
        Charts.write(panels, true, file);
    }

    private static void stack(CategoryChart c, String name, List<String> names, List<Results.SteadyCost> costs,
                              ToDoubleFunction<Results.SteadyCost> us, Color color) {
        Charts.addBars(c, name, names, costs.stream().map(x -> Math.max(0, us.applyAsDouble(x))).toList(), color);
    }

    /** "relay", "relay variant txn", "Debezium", "Debezium tuned". */
    static String shortName(Results.SteadyCost c) {
        if (c.kind().equals("debezium")) {
            return c.variant().equals(DebeziumContender.TUNED_VARIANT) ? "Debezium tuned"
                : c.variant().isEmpty() ? "Debezium" : "Debezium " + c.variant();
        }
        return c.variant().isEmpty() ? "relay" : "relay variant " + c.variant();
    }
}
