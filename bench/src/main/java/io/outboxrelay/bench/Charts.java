package io.outboxrelay.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The PNG charts of a run, drawn with XChart (headless): drain throughput and the ceilings, latency CDFs,
 * the sustainable-rate steps, and drain time, heap and first record against backlog size. A figure of
 * several panels is the panels' images side by side or stacked.
 */
final class Charts {
    private static final Color RELAY = new Color(0x1f77b4);
    private static final Color RELAY_RECORDS = new Color(0x9ecae1);
    private static final Color DEBEZIUM = new Color(0xd62728);
    private static final Color CEILING = new Color(0x7f7f7f);
    private static final Color BOUND = new Color(0x555555);
    /** Relay contenders in blues and greens, Debezium's in reds and oranges, the probe grey. */
    private static final Color[] RELAY_SHADES = {RELAY, new Color(0x2ca02c), new Color(0x17becf), new Color(0x9467bd),
        new Color(0x1a55a0), new Color(0x8c564b)};
    private static final Color[] DEBEZIUM_SHADES = {DEBEZIUM, new Color(0xff7f0e), new Color(0xe377c2),
        new Color(0xbcbd22)};
    private static final int LABEL_ROTATION = 60;
    /** The nines axis ends at p99.99. */
    private static final double NINES_MAX = 4;
    private static final BasicStroke[] RATE_STROKES = {SeriesLines.SOLID, SeriesLines.DASH_DASH, SeriesLines.DOT_DOT,
        SeriesLines.DASH_DOT};

    private Charts() {
    }

    /** Bars: events/s (and records/s) of each drain; below, each ceiling in its own unit. */
    static void throughput(Results r, Path file) throws IOException {
        List<Chart<?, ?>> panels = new ArrayList<>();
        if (!r.drains.isEmpty()) {
            List<String> names = unique(r.drains.stream().map(Results.Drain::label).toList());
            CategoryChart c = bars(1100, 380 + labelsHeight(names), "Drain throughput, " + String.format("%,d", r.volumes.get("drainEvents"))
                + "-event backlog (warm worker)", "events/s (records/s)");
            boolean anyRecords = r.drains.stream().anyMatch(d -> d.subscriptions() > 1);
            if (anyRecords) {
                // drawn first, so the events/s bar of the same drain stands in front of it
                addBars(c, "records/s (3 subscriptions: 3 records per event)", names, r.drains.stream()
                    .map(d -> d.subscriptions() > 1 ? d.recordsPerSec() : 0.0).toList(), RELAY_RECORDS);
            }
            addBars(c, "relay, events/s", names, r.drains.stream()
                .map(d -> d.kind().equals("relay") ? d.eventsPerSec() : 0.0).toList(), RELAY);
            addBars(c, "Debezium + EventRouter, events/s", names, r.drains.stream()
                .map(d -> d.kind().equals("debezium") ? d.eventsPerSec() : 0.0).toList(), DEBEZIUM);
            panels.add(c);
        }
        if (!r.ceilings.isEmpty()) {
            List<String> names = unique(r.ceilings.stream().map(Results.Ceiling::name).toList());
            CategoryChart c = bars(1100, 300 + labelsHeight(names), "Ceilings: each half of the relay's pipeline alone",
                "per second");
            addBars(c, "records/s (producer) or rows/s (SQL)", names, r.ceilings.stream().map(Results.Ceiling::perSec)
                .toList(), CEILING);
            panels.add(c);
        }
        write(panels, true, file);
    }

    /**
     * One CDF line per (contender, rate): latency on a log axis, and the fraction received on a "nines" axis
     * (-log10(1 - q): 1 is p90, 2 is p99, 3 is p99.9), so the tail gets as much room as the body.
     */
    static void latencyCdf(Results r, Path file) throws IOException {
        XYChart c = xy(1100, 700 + 22 * r.latency.size(), "Commit-to-consumer latency CDF", "latency (ms, log scale)",
            "fraction of events received (nines scale)");
        AxesChartStyler s = c.getStyler();
        s.setXAxisLogarithmic(true);
        s.setXAxisDecimalPattern("#,##0.#");
        s.setYAxisMin(0.0);
        s.setYAxisMax(NINES_MAX);
        // a custom formatter on a logarithmic axis makes XChart walk the axis in tiny steps: only on the linear one
        c.setCustomYAxisTickLabelsFormatter(Charts::ninesLabel);
        Palette palette = new Palette();
        Map<String, Integer> rateIndex = new LinkedHashMap<>();
        for (Results.Latency l : r.latency) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (double[] p : l.cdf()) {
                // q = 1 (the max) has no place on the nines axis; the legend gives it
                if (p[1] < 1 && p[0] > 0) {
                    xs.add(p[0]);
                    ys.add(Math.min(NINES_MAX, -Math.log10(1 - p[1])));
                }
            }
            if (xs.isEmpty()) {
                continue;
            }
            String name = String.format("%s @ %,d/s: p50 %s, p99 %s, max %s ms", l.label(), l.rate(), num(l.p50Ms()),
                num(l.p99Ms()), num(l.maxMs()));
            XYSeries series = c.addSeries(name, xs, ys);
            series.setMarker(SeriesMarkers.NONE);
            series.setLineColor(palette.of(l.kind(), l.label()));
            int ri = rateIndex.computeIfAbsent(Integer.toString(l.rate()), k -> rateIndex.size());
            series.setLineStyle(stroke(RATE_STROKES[ri % RATE_STROKES.length], 2.2f));
        }
        write(List.of(c), true, file);
    }

    /**
     * The sustainable-rate phase: p99 against the target rate per contender with the 250 ms bound, and the
     * writers' achieved share of the target with the 95 % bound. A cross marks a step that failed.
     */
    static void sustainable(Results r, Path file) throws IOException {
        int legendRows = r.sustainable.size() + 1;
        XYChart p99 = xy(720, 520 + 22 * legendRows, "Sustainable rate: p99 commit-to-consumer per step",
            "target rate (single-event commits/s)", "p99 latency (ms, log scale)");
        XYChart share = xy(720, 520 + 22 * legendRows, "Writers' achieved rate per step",
            "target rate (single-event commits/s)", "achieved / target (%)");
        p99.getStyler().setYAxisLogarithmic(true);
        for (XYChart c : List.of(p99, share)) {
            c.getStyler().setXAxisMin(0.0);
            c.getStyler().setXAxisDecimalPattern("#,##0");
        }
        p99.getStyler().setYAxisDecimalPattern("#,##0.#");
        share.getStyler().setYAxisDecimalPattern("#,##0");
        Palette palette = new Palette();
        double minRate = Double.MAX_VALUE;
        double maxRate = 0;
        double minP99 = SustainableRate.MAX_P99_MS;
        double maxP99 = SustainableRate.MAX_P99_MS;
        for (Results.Sustainable s : r.sustainable) {
            if (s.steps().isEmpty()) {
                continue;
            }
            Color color = palette.of(s.kind(), s.label());
            Points tail = new Points();
            Points kept = new Points();
            for (Results.SustainableStep st : s.steps()) {
                double x = st.targetRate();
                minRate = Math.min(minRate, x);
                maxRate = Math.max(maxRate, x);
                double y = Math.max(0.1, st.latency().p99Ms());
                tail.add(x, y, st.holds());
                if (!Double.isNaN(y)) {
                    minP99 = Math.min(minP99, y);
                    maxP99 = Math.max(maxP99, y);
                }
                kept.add(x, 100 * st.latency().achievedRate() / st.targetRate(), st.holds());
            }
            String name = s.label() + ": sustainable " + Targets.rateText(s);
            tail.draw(p99, name, color);
            kept.draw(share, name, color);
        }
        // whole decades: XChart labels a logarithmic axis at its powers of ten only
        p99.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(minP99))));
        p99.getStyler().setYAxisMax(Math.pow(10, Math.ceil(Math.log10(maxP99))));
        if (maxRate > 0) {
            List<Double> ends = List.of(minRate, maxRate);
            XYSeries bound = p99.addSeries(String.format("bound: p99 %.0f ms (a cross marks a failed step)",
                SustainableRate.MAX_P99_MS), ends, List.of(SustainableRate.MAX_P99_MS, SustainableRate.MAX_P99_MS));
            dashed(bound);
            XYSeries min = share.addSeries(String.format("bound: %.0f %% of the target (a cross marks a failed step)",
                100 * SustainableRate.MIN_ACHIEVED), ends, List.of(100 * SustainableRate.MIN_ACHIEVED,
                100 * SustainableRate.MIN_ACHIEVED));
            dashed(min);
        }
        write(List.of(p99, share), false, file);
    }

    /** Drain time, worker heap and first record against backlog size. */
    static void scale(Results r, Path file) throws IOException {
        List<Results.Drain> s = r.scale;
        if (s.isEmpty()) {
            return;
        }
        String who = s.get(0).label();
        List<Double> backlog = s.stream().map(d -> (double) d.events()).toList();
        XYChart time = xy(520, 470, "Drain time (" + who + ")", "backlog (events)", "drain time (s)");
        line(time, "measured", backlog, s.stream().map(Results.Drain::seconds).toList(), RELAY);
        Results.Drain last = s.get(s.size() - 1);
        XYSeries linear = time.addSeries("linear through the largest", List.of(0.0, (double) last.events()),
            List.of(0.0, last.seconds()));
        dashed(linear);
        XYChart heap = xy(520, 470, "Worker heap", "backlog (events)", "MB");
        line(heap, "live heap after a full GC mid-drain", backlog, s.stream()
            .map(d -> Double.isNaN(d.heap().liveMidDrainMb()) ? 0 : d.heap().liveMidDrainMb()).toList(), RELAY);
        line(heap, "highest heap after any GC", backlog, s.stream().map(d -> d.heap().maxAfterGcMb()).toList(),
            new Color(0xff7f0e));
        heap.getStyler().setYAxisMin(0.0);
        XYChart first = xy(520, 470, "First record after creating the connector", "backlog (events)", "ms");
        line(first, "first record", backlog, s.stream().map(Results.Drain::firstRecordAfterMs).toList(), RELAY);
        XYSeries bound = first.addSeries(String.format("target %.0f ms", Targets.FIRST_RECORD_MS),
            List.of(0.0, (double) last.events()), List.of(Targets.FIRST_RECORD_MS, Targets.FIRST_RECORD_MS));
        dashed(bound);
        first.getStyler().setYAxisMin(0.0);
        for (XYChart c : List.of(time, heap, first)) {
            c.getStyler().setXAxisMin(0.0);
            c.getStyler().setXAxisDecimalPattern("#,##0");
        }
        write(List.of(time, heap, first), false, file);
    }

    /** Colours by contender: the same contender keeps its colour across the rates of a chart. */
    private static final class Palette {
        private final Map<String, Color> colors = new LinkedHashMap<>();
        private int relays;
        private int debeziums;

        Color of(String kind, String label) {
            String key = label.replace(" (rematch)", "");
            return colors.computeIfAbsent(key, k -> switch (kind) {
                case "relay" -> RELAY_SHADES[relays++ % RELAY_SHADES.length];
                case "debezium" -> DEBEZIUM_SHADES[debeziums++ % DEBEZIUM_SHADES.length];
                default -> CEILING;
            });
        }
    }

    /** Bar categories must differ (equal ones would share a bar): a repeated label gets " #2", " #3". */
    static List<String> unique(List<String> labels) {
        List<String> out = new ArrayList<>();
        for (String l : labels) {
            String name = l;
            for (int n = 2; out.contains(name); n++) {
                name = l + " #" + n;
            }
            out.add(name);
        }
        return out;
    }

    /** Room under the bars for their labels, written at {@link #LABEL_ROTATION} degrees (XChart drops overlapping ones). */
    static int labelsHeight(List<String> labels) {
        int longest = labels.stream().mapToInt(String::length).max().orElse(10);
        return (int) (longest * 6.5 * Math.sin(Math.toRadians(LABEL_ROTATION))) + 40;
    }

    static CategoryChart bars(int w, int h, String title, String yTitle) {
        CategoryChart c = new CategoryChartBuilder().width(w).height(h).title(title).yAxisTitle(yTitle).build();
        style(c.getStyler());
        c.getStyler().setOverlapped(true);
        c.getStyler().setXAxisLabelRotation(LABEL_ROTATION);
        c.getStyler().setYAxisDecimalPattern("#,##0");
        c.getStyler().setYAxisMin(0.0);
        c.getStyler().setLabelsVisible(false);
        c.getStyler().setAvailableSpaceFill(0.7);
        return c;
    }

    static void addBars(CategoryChart c, String name, List<String> categories, List<Double> values,
                                Color color) {
        CategorySeries s = c.addSeries(name, categories, values);
        s.setFillColor(color);
    }

    private static XYChart xy(int w, int h, String title, String xTitle, String yTitle) {
        XYChart c = new XYChartBuilder().width(w).height(h).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        style(c.getStyler());
        return c;
    }

    private static void style(AxesChartStyler s) {
        s.setChartBackgroundColor(Color.WHITE);
        s.setPlotBackgroundColor(Color.WHITE);
        s.setPlotBorderColor(new Color(0x999999));
        s.setPlotGridLinesColor(new Color(0xdddddd));
        s.setLegendPosition(Styler.LegendPosition.OutsideS);
        s.setLegendLayout(Styler.LegendLayout.Vertical);
        s.setLegendBorderColor(Color.WHITE);
        s.setChartTitleBoxVisible(false);
        s.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        s.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        s.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        s.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        s.setAntiAlias(true);
    }

    /** A line through the points, each marked with a dot. */
    private static void line(XYChart c, String name, List<Double> xs, List<Double> ys, Color color) {
        if (!xs.isEmpty()) {
            solid(c, name, xs, ys, color).setMarker(SeriesMarkers.CIRCLE).setMarkerColor(color);
        }
    }

    private static XYSeries solid(XYChart c, String name, List<Double> xs, List<Double> ys, Color color) {
        XYSeries s = c.addSeries(name, xs, ys);
        s.setLineColor(color);
        s.setLineStyle(stroke(SeriesLines.SOLID, 2f));
        return s;
    }

    /** A contender's steps: one line through them, a dot on each step held and a cross on each failed. */
    private static final class Points {
        private final List<Double> xs = new ArrayList<>();
        private final List<Double> ys = new ArrayList<>();
        private final List<Boolean> held = new ArrayList<>();

        void add(double x, double y, boolean holds) {
            if (!Double.isNaN(y)) {
                xs.add(x);
                ys.add(y);
                held.add(holds);
            }
        }

        void draw(XYChart c, String name, Color color) {
            if (xs.isEmpty()) {
                return;
            }
            solid(c, name, xs, ys, color).setMarker(SeriesMarkers.NONE);
            for (boolean holds : new boolean[] {true, false}) {
                List<Double> x = new ArrayList<>();
                List<Double> y = new ArrayList<>();
                for (int i = 0; i < xs.size(); i++) {
                    if (held.get(i) == holds) {
                        x.add(xs.get(i));
                        y.add(ys.get(i));
                    }
                }
                if (!x.isEmpty()) {
                    XYSeries marks = c.addSeries(name + (holds ? " (held)" : " (failed)"), x, y);
                    marks.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
                    marks.setMarker(holds ? SeriesMarkers.CIRCLE : SeriesMarkers.CROSS);
                    marks.setMarkerColor(color);
                    marks.setShowInLegend(false);
                }
            }
        }
    }

    private static void dashed(XYSeries s) {
        s.setMarker(SeriesMarkers.NONE);
        s.setLineColor(BOUND);
        s.setLineStyle(stroke(SeriesLines.DASH_DASH, 1.5f));
    }

    private static BasicStroke stroke(BasicStroke pattern, float width) {
        return new BasicStroke(width, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10, pattern.getDashArray(), 0);
    }

    /** 0 -> "p0", 1 -> "p90", 2 -> "p99", 3 -> "p99.9" ... (y = -log10(1 - q)); no label between the nines. */
    static String ninesLabel(double y) {
        if (Math.abs(y - Math.rint(y)) > 1e-6) {
            return "";
        }
        double q = 100 * (1 - Math.pow(10, -y));
        String s = String.format("%.4f", q).replaceAll("0+$", "").replaceAll("\\.$", "");
        return "p" + s;
    }

    /** 0.5, 3, 12, 1,500: no trailing zeros. */
    private static String num(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        if (Math.abs(v) >= 100) {
            return String.format("%,.0f", v);
        }
        return String.format("%.1f", v).replaceAll("\\.0$", "");
    }

    /** The panels side by side, or stacked, in one PNG. */
    static void write(List<? extends Chart<?, ?>> panels, boolean stacked, Path file) throws IOException {
        List<BufferedImage> images = new ArrayList<>();
        for (Chart<?, ?> c : panels) {
            images.add(BitmapEncoder.getBufferedImage(c));
        }
        int w = stacked ? images.stream().mapToInt(BufferedImage::getWidth).max().orElse(1)
            : images.stream().mapToInt(BufferedImage::getWidth).sum();
        int h = stacked ? images.stream().mapToInt(BufferedImage::getHeight).sum()
            : images.stream().mapToInt(BufferedImage::getHeight).max().orElse(1);
        BufferedImage out = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = out.createGraphics();
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        int at = 0;
        for (BufferedImage img : images) {
            g.drawImage(img, stacked ? 0 : at, stacked ? at : 0, null);
            at += stacked ? img.getHeight() : img.getWidth();
        }
        g.dispose();
        ImageIO.write(out, "png", file.toFile());
    }
}
