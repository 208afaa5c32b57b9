package io.outboxrelay.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * CPU time consumed by each party of the benchmark, read from {@code /proc} (Linux): the worker JVM,
 * the PostgreSQL server (postmaster, its live backends and the backends that already exited), the broker's
 * JVM and this JVM (the consumer and the writers). Values are milliseconds of user + system time;
 * outside Linux every reading is 0 and the report says "n/a".
 */
final class CpuMeter {
    /** Clock ticks per second of /proc's stat fields; 100 on every mainstream Linux. */
    private static final long TICKS_PER_SECOND = 100;

    private final long workerPid;
    private final long postmasterPid;
    private final long brokerPid;

    CpuMeter(long workerPid, long postmasterPid, long brokerPid) {
        this.workerPid = workerPid;
        this.postmasterPid = postmasterPid;
        this.brokerPid = brokerPid;
    }

    /** A meter of the whole machine alone (every party reads 0). */
    static CpuMeter machine() {
        return new CpuMeter(-1, -1, -1);
    }

    /**
     * A reading of all four parties at once, plus the whole machine's busy CPU time (all processes, from
     * /proc/stat) and wall time: {@link #othersMs()} is what processes outside the benchmark used. {@code jitMs}, the
     * worker's and the broker's JIT compiling ({@link #jitMs()}), is part of their times, not apart from them.
     */
    record Sample(long workerMs, long postgresMs, long brokerMs, long benchMs, long machineBusyMs, long wallMs,
                  long jitMs) {
        Sample(long workerMs, long postgresMs, long brokerMs, long benchMs, long machineBusyMs, long wallMs) {
            this(workerMs, postgresMs, brokerMs, benchMs, machineBusyMs, wallMs, 0);
        }

        Sample minus(Sample earlier) {
            return new Sample(workerMs - earlier.workerMs, postgresMs - earlier.postgresMs, brokerMs - earlier.brokerMs,
                benchMs - earlier.benchMs, machineBusyMs - earlier.machineBusyMs, wallMs - earlier.wallMs,
                jitMs - earlier.jitMs);
        }

        /** CPU used by processes that are not part of the benchmark (other builds, tests) in this interval. */
        long othersMs() {
            return Math.max(0, machineBusyMs - workerMs - postgresMs - brokerMs - benchMs);
        }
    }

    Sample sample() {
        return new Sample(ownMs(workerPid), postgresMs(), ownMs(brokerPid), benchMs(), machineBusyMs(),
            System.nanoTime() / 1_000_000, jitMs());
    }

    /**
     * Waits until the whole machine (the worker, PostgreSQL, the broker, this JVM and any other process) uses less
     * than {@code maxCores} over one {@code windowMs} window (what an earlier step or phase left running, a
     * connector's shutdown, a drain's compaction or garbage collection, has ended), or until {@code timeoutMs}
     * passed; returns the cores of the last window. Outside Linux it returns at once.
     */
    double awaitQuiet(double maxCores, long windowMs, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        double cores = 0;
        do {
            Sample before = sample();
            Thread.sleep(windowMs); // a measuring window, not a wait for luck: its CPU is what is compared
            Sample d = sample().minus(before);
            // the whole machine: the bench's own threads and other processes (a JIT, a collector) count too
            cores = d.machineBusyMs() / (double) Math.max(1, d.wallMs());
            if (cores < maxCores || !available()) {
                return cores;
            }
        } while (System.nanoTime() < deadline);
        return cores;
    }

    /** Busy time of all CPUs (user, nice, system, irq, softirq, steal) since boot, in ms; 0 outside Linux. */
    static long machineBusyMs() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
                if (line.startsWith("cpu ")) {
                    String[] f = line.trim().split("\\s+");
                    long busy = 0;
                    for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                        busy += Long.parseLong(f[i]);
                    }
                    return busy * 1000 / TICKS_PER_SECOND;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return 0;
    }

    static boolean available() {
        return Files.isReadable(Path.of("/proc/self/stat"));
    }

    private long postgresMs() {
        if (postmasterPid <= 0 || stat(postmasterPid) == null) {
            return 0;
        }
        return consistentTotal(() -> {
            long[] pm = stat(postmasterPid);
            return pm == null ? 0 : pm[0] + pm[1] + pm[2] + pm[3]; // own + reaped children (exited backends)
        }, () -> {
            long live = 0;
            Optional<ProcessHandle> handle = ProcessHandle.of(postmasterPid);
            if (handle.isPresent()) {
                for (ProcessHandle child : (Iterable<ProcessHandle>) handle.get().children()::iterator) {
                    long[] c = stat(child.pid());
                    if (c != null) {
                        live += c[0] + c[1];
                    }
                }
            }
            return live;
        }) * 1000 / TICKS_PER_SECOND;
    }

    /**
     * A parent's own and reaped children's time plus its live children's, read so that no child is missed or counted
     * twice: a child reaped while the live ones are read would be in neither reading or in both, so the parent's is
     * read before and after, and the whole is read again until it did not change (a few tries; then the last).
     */
    static long consistentTotal(LongSupplier ownAndReaped, LongSupplier live) {
        long total = 0;
        for (int attempt = 0; attempt < 5; attempt++) {
            long before = ownAndReaped.getAsLong();
            long children = live.getAsLong();
            long after = ownAndReaped.getAsLong();
            total = after + children;
            if (after == before) {
                return total;
            }
        }
        return total;
    }

    private static long ownMs(long pid) {
        long[] s = pid <= 0 ? null : stat(pid);
        return s == null ? 0 : (s[0] + s[1]) * 1000 / TICKS_PER_SECOND;
    }

    /**
     * CPU time of the worker's and the broker's JIT compiler threads (C1, C2), in ms: what those JVMs still spend
     * compiling, which a worker that has run for hours no longer does. Both JVMs keep a fixed number of compiler threads
     * ({@code -XX:-UseDynamicNumberOfCompilerThreads}): the time of a thread that exited would be in neither reading.
     */
    long jitMs() {
        return compilerTicks(workerPid) + compilerTicks(brokerPid);
    }

    private static long compilerTicks(long pid) {
        if (pid <= 0) {
            return 0;
        }
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String s = Files.readString(task.resolve("stat"));
                    String comm = s.substring(s.indexOf('(') + 1, s.lastIndexOf(')'));
                    if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
                        long[] times = times(s);
                        ticks += times[0] + times[1];
                    }
                } catch (IOException | RuntimeException e) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0; // the process is gone, or not Linux
        }
        return ticks * 1000 / TICKS_PER_SECOND;
    }

    private static long benchMs() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime() / 1_000_000;
        }
        return 0;
    }

    /** utime, stime, cutime, cstime in ticks and the parent's pid, or null when the process is gone or not Linux. */
    static long[] stat(long pid) {
        try {
            return times(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** utime, stime, cutime, cstime and the parent's pid of a process's or a thread's {@code stat} text. */
    private static long[] times(String stat) {
        // the command name (field 2) is in parentheses and may contain spaces: parse after the last ')'
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // f[0] is field 3 (state): utime is field 14 -> f[11]
        return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]),
            Long.parseLong(f[14]), Long.parseLong(f[1])};
    }
}
