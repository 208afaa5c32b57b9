package io.outboxrelay.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The worker JVM's heap over one time window, from {@link BenchWorker}'s heap log: the highest heap in
 * use at any 100 ms sample (includes garbage not yet collected, so it depends on the collector's mood),
 * the highest heap left after any collection (young or mixed), and the live heap after the forced full
 * collections the benchmark requested inside the window (the retained set: what "flat" is about), and
 * the bytes allocated between the collections of the window (heap before a collection minus heap after
 * the previous one; a lower bound that ignores what was allocated after the last collection).
 */
record HeapStats(double peakUsedMb, double maxAfterGcMb, List<Double> liveMb, int collections, double allocatedMb) {
    private static final double MB = 1024.0 * 1024.0;

    static HeapStats read(Path log, long fromMs, long toMs) throws IOException {
        double peak = 0;
        double afterGc = 0;
        int gcs = 0;
        double allocated = 0;
        double lastAfter = Double.NaN;
        List<Double> live = new ArrayList<>();
        if (!Files.exists(log)) {
            return new HeapStats(0, 0, live, 0, 0);
        }
        for (String line : Files.readAllLines(log)) {
            String[] f = line.split(" ");
            if (f.length < 3) {
                continue;
            }
            long at;
            try {
                at = Long.parseLong(f[1]);
            } catch (NumberFormatException e) {
                continue;
            }
            if (at < fromMs || at > toMs) {
                if (at < fromMs && f[0].equals("gc") && f.length >= 4) {
                    lastAfter = Long.parseLong(f[3]) / MB;
                }
                continue;
            }
            switch (f[0]) {
                case "s" -> peak = Math.max(peak, Long.parseLong(f[2]) / MB);
                case "gc" -> {
                    if (f.length >= 4) {
                        double after = Long.parseLong(f[3]) / MB;
                        afterGc = Math.max(afterGc, after);
                        gcs++;
                        if (f.length >= 5 && !Double.isNaN(lastAfter)) {
                            allocated += Math.max(0, Long.parseLong(f[4]) / MB - lastAfter);
                        }
                        lastAfter = after;
                    }
                }
                case "live" -> live.add(Long.parseLong(f[2]) / MB);
                default -> {
                }
            }
        }
        return new HeapStats(peak, afterGc, live, gcs, allocated);
    }

    /** The largest live heap after a forced collection in the window, or NaN when none was taken. */
    double maxLiveMb() {
        return liveMb.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }
}
