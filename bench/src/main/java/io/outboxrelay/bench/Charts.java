package io.outboxrelay.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleUnaryOperator;
import javax.imageio.ImageIO;

/**
 * The PNG charts of a run, drawn with Java2D in headless mode (no charting library): throughput bars
 * (drains and ceilings), latency CDFs, and drain time and live heap against backlog size.
 */
final class Charts {
    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
        new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)};
    private static final Color RELAY = new Color(0x1f77b4);
    private static final Color RELAY_RECORDS = new Color(0x9ecae1);
    private static final Color DEBEZIUM = new Color(0xd62728);
    private static final Color CEILING = new Color(0x7f7f7f);

    private Charts() {
    }

    /** Horizontal bars: events/s (and records/s) of each drain, then each ceiling. */
    static void throughput(Results r, Path file) throws IOException {
        record Bar(String label, double value, Color color, String unit) {
        }
        List<Bar> bars = new ArrayList<>();
        for (Results.Drain d : r.drains) {
            Color c = d.kind().equals("debezium") ? DEBEZIUM : RELAY;
            bars.add(new Bar(d.label(), d.eventsPerSec(), c, "events/s"));
            if (d.subscriptions() > 1) {
                bars.add(new Bar(d.label() + " (records)", d.recordsPerSec(), RELAY_RECORDS, "records/s"));
            }
        }
        for (Results.Ceiling c : r.ceilings) {
            bars.add(new Bar("ceiling: " + c.name(), c.perSec(), CEILING, c.unit()));
        }
        int w = 1100;
        int rowH = 26;
        int top = 50;
        int left = 380;
        int h = top + bars.size() * rowH + 50;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, "Drain throughput, " + r.volumes.get("drainEvents") + "-event backlog (warm worker)");
        double max = bars.stream().mapToDouble(Bar::value).max().orElse(1) * 1.15;
        int plotW = w - left - 40;
        g.setColor(new Color(0xdddddd));
        for (int i = 0; i <= 5; i++) {
            int x = left + (int) (plotW * i / 5.0);
            g.drawLine(x, top - 5, x, h - 40);
            g.setColor(Color.DARK_GRAY);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            g.drawString(String.format("%,.0f", max * i / 5), x - 15, h - 25);
            g.setColor(new Color(0xdddddd));
        }
        for (int i = 0; i < bars.size(); i++) {
            Bar b = bars.get(i);
            int y = top + i * rowH;
            int bw = (int) (plotW * b.value() / max);
            g.setColor(b.color());
            g.fillRect(left, y + 3, Math.max(1, bw), rowH - 8);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString(b.label(), 10, y + rowH - 9);
            g.drawString(String.format("%,.0f %s", b.value(), b.unit()), left + bw + 5, y + rowH - 9);
        }
        save(g, img, file);
    }

    /** One CDF line per (contender, rate); latency on a log axis. */
    static void latencyCdf(Results r, Path file) throws IOException {
        int w = 1100;
        int h = 650;
        int left = 70;
        int right = 330;
        int top = 50;
        int bottom = 60;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, "Commit-to-consumer latency CDF (x: ms, log scale)");
        double minMs = 0.5;
        double maxMs = 1;
        for (Results.Latency l : r.latency) {
            maxMs = Math.max(maxMs, l.maxMs());
        }
        maxMs = Math.pow(10, Math.ceil(Math.log10(maxMs)));
        double lo = Math.log10(minMs);
        double hi = Math.log10(maxMs);
        int plotW = w - left - right;
        int plotH = h - top - bottom;
        DoubleUnaryOperator xOf = ms -> left + plotW * (Math.log10(Math.max(minMs, ms)) - lo) / (hi - lo);
        DoubleUnaryOperator yOf = q -> top + plotH * (1 - q);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (double ms = 1; ms <= maxMs; ms *= 10) {
            for (int k = 1; k < 10 && ms * k <= maxMs; k++) {
                int x = (int) xOf.applyAsDouble(ms * k);
                g.setColor(k == 1 ? new Color(0xbbbbbb) : new Color(0xeeeeee));
                g.drawLine(x, top, x, top + plotH);
            }
            g.setColor(Color.DARK_GRAY);
            g.drawString(ms >= 1000 ? String.format("%.0f s", ms / 1000) : String.format("%.0f ms", ms),
                (int) xOf.applyAsDouble(ms) - 12, top + plotH + 18);
        }
        for (double q : new double[] {0, 0.25, 0.5, 0.75, 0.95, 0.99, 1}) {
            int y = (int) yOf.applyAsDouble(q);
            g.setColor(q == 0.99 || q == 0.5 ? new Color(0xbbbbbb) : new Color(0xeeeeee));
            g.drawLine(left, y, left + plotW, y);
            g.setColor(Color.DARK_GRAY);
            g.drawString(q == 0.99 ? "p99" : q == 0.95 ? "p95" : String.format("%.2f", q), 20, y + 4);
        }
        g.setColor(Color.BLACK);
        g.drawRect(left, top, plotW, plotH);
        g.drawString("fraction of events received", 10, top - 10);
        int i = 0;
        for (Results.Latency l : r.latency) {
            Color c = PALETTE[i % PALETTE.length];
            g.setColor(c);
            g.setStroke(new BasicStroke(l.rate() >= 5000 ? 2.2f : 2.2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND,
                10, l.rate() >= 5000 ? new float[] {7, 4} : null, 0));
            int px = -1;
            int py = -1;
            for (double[] p : l.cdf()) {
                int x = (int) xOf.applyAsDouble(p[0]);
                int y = (int) yOf.applyAsDouble(p[1]);
                if (px >= 0) {
                    g.drawLine(px, py, x, y);
                }
                px = x;
                py = y;
            }
            int ly = top + 20 + i * 40;
            g.drawLine(w - right + 15, ly, w - right + 45, ly);
            g.setStroke(new BasicStroke(1));
            g.setColor(Color.BLACK);
            g.drawString(l.label() + " @ " + String.format("%,d", l.rate()) + "/s", w - right + 50, ly + 4);
            g.drawString(String.format("p50 %.1f  p99 %.1f  max %.0f ms", l.p50Ms(), l.p99Ms(), l.maxMs()),
                w - right + 50, ly + 18);
            i++;
        }
        save(g, img, file);
    }

    /** Drain time and live heap against backlog size, with a line through the origin and the largest point. */
    static void scale(Results r, Path file) throws IOException {
        List<Results.Drain> s = r.scale;
        if (s.isEmpty()) {
            return;
        }
        int w = 1100;
        int h = 520;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, "Scale: " + s.get(0).label() + " - drain time and worker live heap by backlog");
        double maxEvents = s.stream().mapToDouble(Results.Drain::events).max().orElse(1);
        double maxSec = s.stream().mapToDouble(Results.Drain::seconds).max().orElse(1) * 1.1;
        double maxHeap = 0;
        for (Results.Drain d : s) {
            maxHeap = Math.max(maxHeap, Math.max(d.heap().maxAfterGcMb(), nz(d.heap().liveMidDrainMb())));
        }
        maxHeap = Math.max(64, maxHeap * 1.2);
        panel(g, 60, 60, 460, 360, maxEvents, maxSec, "backlog (events)", "drain time (s)");
        Results.Drain last = s.get(s.size() - 1);
        g.setColor(new Color(0xbbbbbb));
        g.setStroke(new BasicStroke(1, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {5, 5}, 0));
        g.drawLine(60, 420, 60 + 460, 420 - (int) (360 * (last.seconds() / maxEvents * maxEvents) / maxSec));
        g.setStroke(new BasicStroke(2));
        for (Results.Drain d : s) {
            int x = 60 + (int) (460 * d.events() / maxEvents);
            int y = 420 - (int) (360 * d.seconds() / maxSec);
            g.setColor(RELAY);
            g.fillOval(x - 5, y - 5, 10, 10);
            g.setColor(Color.BLACK);
            g.drawString(String.format("%.1f s", d.seconds()), x - 50, y - 8);
        }
        panel(g, 600, 60, 460, 360, maxEvents, maxHeap, "backlog (events)", "worker heap (MB)");
        for (Results.Drain d : s) {
            int x = 600 + (int) (460 * d.events() / maxEvents);
            int yLive = 420 - (int) (360 * nz(d.heap().liveMidDrainMb()) / maxHeap);
            int yAfter = 420 - (int) (360 * d.heap().maxAfterGcMb() / maxHeap);
            g.setColor(RELAY);
            g.fillOval(x - 5, yLive - 5, 10, 10);
            g.setColor(new Color(0xff7f0e));
            g.drawRect(x - 4, yAfter - 4, 8, 8);
            g.setColor(Color.BLACK);
            g.drawString(String.format("%.0f", nz(d.heap().liveMidDrainMb())), x - 30, yLive + 4);
        }
        g.setColor(RELAY);
        g.fillOval(610, 470, 10, 10);
        g.setColor(Color.BLACK);
        g.drawString("live heap after a full GC mid-drain", 625, 479);
        g.setColor(new Color(0xff7f0e));
        g.drawRect(610, 490, 8, 8);
        g.setColor(Color.BLACK);
        g.drawString("highest heap after any GC during the drain", 625, 499);
        save(g, img, file);
    }

    private static double nz(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    private static void panel(Graphics2D g, int x, int y, int pw, int ph, double maxX, double maxY, String xl,
                              String yl) {
        g.setStroke(new BasicStroke(1));
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (int i = 0; i <= 4; i++) {
            int gx = x + pw * i / 4;
            int gy = y + ph - ph * i / 4;
            g.setColor(new Color(0xeeeeee));
            g.drawLine(gx, y, gx, y + ph);
            g.drawLine(x, gy, x + pw, gy);
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format("%,.0f", maxX * i / 4), gx - 20, y + ph + 15);
            g.drawString(String.format("%,.0f", maxY * i / 4), x - 45, gy + 4);
        }
        g.setColor(Color.BLACK);
        g.drawRect(x, y, pw, ph);
        g.drawString(xl, x + pw / 2 - 40, y + ph + 32);
        g.drawString(yl, x, y - 8);
    }

    private static Graphics2D canvas(BufferedImage img, String title) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString(title, 10, 25);
        return g;
    }

    private static void save(Graphics2D g, BufferedImage img, Path file) throws IOException {
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }
}
