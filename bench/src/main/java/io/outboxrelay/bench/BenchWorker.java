package io.outboxrelay.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Level;
import java.util.logging.LogManager;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.runtime.Connect;

/**
 * The Connect worker of the benchmark, in a JVM of its own so that its heap and CPU are its own: a
 * distributed worker started the way {@code connect-distributed.sh} starts one, with both contenders'
 * plugins on the class path. It writes one line per garbage collection (heap used after it) and one
 * heap sample every 100 ms to a file, and reads commands on stdin: {@code gc} forces a full
 * collection and logs the live heap after it; end of input stops the worker.
 *
 * <p>Usage: {@code java -cp ... io.outboxrelay.bench.BenchWorker worker.properties heap.log}, as
 * {@link MeasuredWorker} starts it.
 */
public final class BenchWorker {
    private final PrintWriter heapLog;
    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();

    private BenchWorker(PrintWriter heapLog) {
        this.heapLog = heapLog;
    }

    public static void main(String[] args) throws Exception {
        LogManager.getLogManager().getLogger("").setLevel(Level.SEVERE);
        Properties props = new Properties();
        try (var in = new FileInputStream(args[0])) {
            props.load(in);
        }
        Map<String, String> workerProps = new HashMap<>();
        props.forEach((k, v) -> workerProps.put(k.toString(), v.toString()));
        PrintWriter heapLog = new PrintWriter(Files.newBufferedWriter(Path.of(args[1]), StandardCharsets.UTF_8), true);
        BenchWorker worker = new BenchWorker(heapLog);
        worker.watchCollections();
        Thread sampler = new Thread(worker::sampleHeap, "bench-heap-sampler");
        sampler.setDaemon(true);
        sampler.start();

        // the parent (MeasuredWorker) knows the REST port: it wrote the listeners into the properties
        Connect<?> connect = new ConnectDistributed().startConnect(workerProps);

        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = commands.readLine()) != null) {
            if (line.trim().equals("gc")) {
                worker.forcedGc();
            } else if (line.trim().equals("stop")) {
                break;
            }
        }
        connect.stop();
        heapLog.flush();
        System.exit(0);
    }

    /** One line per collection: {@code gc <epoch ms> <collector> <heap bytes used after> <used before>}. */
    private void watchCollections() {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (!(gc instanceof NotificationEmitter emitter)) {
                continue;
            }
            emitter.addNotificationListener((notification, handback) -> {
                if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
                    return;
                }
                GarbageCollectionNotificationInfo info =
                    GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
                long after = 0;
                long before = 0;
                for (MemoryUsage u : info.getGcInfo().getMemoryUsageAfterGc().values()) {
                    after += u.getUsed();
                }
                for (MemoryUsage u : info.getGcInfo().getMemoryUsageBeforeGc().values()) {
                    before += u.getUsed();
                }
                synchronized (heapLog) {
                    heapLog.println("gc " + System.currentTimeMillis() + " " + info.getGcName().replace(' ', '_') + " "
                        + after + " " + before);
                }
            }, null, null);
        }
    }

    /** Every 100 ms: {@code s <epoch ms> <heap used> <heap committed>}. */
    private void sampleHeap() {
        while (true) {
            MemoryUsage heap = memory.getHeapMemoryUsage();
            synchronized (heapLog) {
                heapLog.println("s " + System.currentTimeMillis() + " " + heap.getUsed() + " " + heap.getCommitted());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** {@code live <epoch ms> <heap bytes used after a full collection>}. */
    private void forcedGc() {
        System.gc();
        long used = memory.getHeapMemoryUsage().getUsed();
        synchronized (heapLog) {
            heapLog.println("live " + System.currentTimeMillis() + " " + used);
        }
    }
}
