package io.outboxrelay.embedded;

import java.io.File;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The one way this project runs a Kafka Connect worker in an OS process of its own: {@code java <jvm args> -cp
 * <class path> <main class> <dir>/<name>.properties [args]}, where the main class is Connect's own
 * ({@code ConnectDistributed}, {@code ConnectStandalone}) or a wrapper around it (the benchmark's heap-logging
 * {@code BenchWorker}). A fault test kills it; the benchmark measures its heap and CPU apart from its own.
 *
 * <p>The REST API listens on a free port chosen here, written into the worker's properties with the
 * {@code listeners} and {@code rest.advertised.*} settings, so {@link #rest()} is known before the start and a
 * restart ({@link #start()} again, same group and internal topics) comes back on the same port. Standard output
 * and error go to {@code <dir>/<name>.stdout}; {@link #send} writes a line to the worker's standard input.
 *
 * <p>{@link #kill()} is a SIGKILL (no shutdown hook runs: no flush, no stamp, no lease release);
 * {@link #stop()} is a SIGTERM, on which Connect stops its tasks cleanly.
 */
public final class WorkerProcess implements AutoCloseable {
    private static final Duration START_WAIT = Duration.ofSeconds(120);

    private final String name;
    private final List<String> command;
    private final Path log;
    private final int restPort;
    private final ConnectRestClient rest;
    private Process process;
    private Writer stdin;
    private int starts;

    /**
     * @param dir where the worker's properties and log go
     * @param classPath the child's class path: Connect and whatever plugins are to load from it
     * @param mainClass {@code org.apache.kafka.connect.cli.ConnectDistributed}, {@code ...ConnectStandalone}, or a
     *     wrapper whose first argument is the properties file
     * @param workerProperties the worker's settings ({@link WorkerProperties}); the REST ones are added here
     * @param args what follows the properties file on the command line
     */
    public WorkerProcess(String name, Path dir, List<String> classPath, List<String> jvmArgs, String mainClass,
                         Map<String, String> workerProperties, List<String> args) {
        this.name = name;
        this.log = dir.resolve(name + ".stdout");
        this.restPort = freePort();
        this.rest = new ConnectRestClient("http://localhost:" + restPort, Duration.ofSeconds(30));
        Map<String, String> props = new LinkedHashMap<>(workerProperties);
        props.put("listeners", "http://localhost:" + restPort);
        props.put("rest.advertised.host.name", "localhost");
        props.put("rest.advertised.port", Integer.toString(restPort));
        Path properties = dir.resolve(name + ".properties");
        try {
            Files.createDirectories(dir);
            Files.writeString(properties, props.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", String.join(File.pathSeparator, classPath), mainClass, properties.toString()));
        cmd.addAll(args);
        this.command = List.copyOf(cmd);
    }

    /** Starts the worker (again, after a kill or stop) and waits until its REST API answers. */
    public WorkerProcess start() {
        if (alive()) {
            throw new IllegalStateException("worker " + name + " is already running");
        }
        appendToLog("===== start #" + (++starts) + " =====");
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start worker " + name, e);
        }
        stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        long deadline = System.nanoTime() + START_WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("worker " + name + " exited with " + process.exitValue()
                    + " while starting; see " + log);
            }
            try {
                if (rest.get("connectors").status() == 200) {
                    return this;
                }
            } catch (UncheckedIOException notYet) {
                // not listening yet
            }
            pause(250);
        }
        process.destroyForcibly();
        throw new IllegalStateException("worker " + name + " did not answer on port " + restPort + " within "
            + START_WAIT.toSeconds() + " s; see " + log);
    }

    /** SIGKILL: the worker dies mid-flight, like a machine losing power. */
    public void kill() {
        end(true, Duration.ofSeconds(30));
    }

    /** SIGTERM: Connect's shutdown hook stops every task cleanly, then the JVM exits. */
    public void stop() {
        end(false, Duration.ofSeconds(90));
    }

    /** A line to the worker's standard input (a command for a wrapper main class). */
    public void send(String line) throws IOException {
        stdin.write(line + "\n");
        stdin.flush();
    }

    /** Waits up to {@code timeout} for the process to exit by itself; true when it has. */
    public boolean awaitExit(Duration timeout) throws InterruptedException {
        return process == null || process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public boolean alive() {
        return process != null && process.isAlive();
    }

    public long pid() {
        return process.pid();
    }

    /** The REST API, e.g. {@code http://localhost:41234/}. */
    public String restUrl() {
        return "http://localhost:" + restPort + "/";
    }

    public ConnectRestClient rest() {
        return rest;
    }

    /** The worker's output, all starts appended, each after a {@code ===== start #n =====} line. */
    public Path log() {
        return log;
    }

    public String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "";
        }
    }

    /** A clean stop when it is still running; SIGKILL if that fails. */
    @Override
    public void close() {
        try {
            stop();
        } catch (IllegalStateException e) {
            kill();
        }
    }

    /** SIGKILL or SIGTERM and a wait for the exit; nothing when the worker is not running. */
    private void end(boolean forcibly, Duration timeout) {
        if (!alive()) {
            return;
        }
        appendToLog(forcibly ? "===== SIGKILL =====" : "===== SIGTERM =====");
        if (forcibly) {
            process.destroyForcibly(); // SIGKILL on Linux
        } else {
            process.destroy(); // SIGTERM: the JVM's shutdown hooks run
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
                throw new IllegalStateException("worker " + name + " (pid " + process.pid() + ") did not exit within "
                    + timeout + " of " + (forcibly ? "SIGKILL" : "SIGTERM"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void appendToLog(String line) {
        try {
            Files.writeString(log, LocalTime.now() + " " + line + "\n", StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
        } catch (IOException ignored) {
            // the marker is only a reading aid
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
