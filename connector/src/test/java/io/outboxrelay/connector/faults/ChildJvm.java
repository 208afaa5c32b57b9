package io.outboxrelay.connector.faults;

import io.outboxrelay.connector.Version;
import io.outboxrelay.testsupport.CapturingLogProvider;
import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.ProjectFiles;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * Starts the JVMs a fault test kills: a Connect worker or a Kafka broker as a separate OS process, so a
 * SIGKILL takes down exactly that process and nothing in the test JVM. The child's classpath is this
 * test JVM's, minus the project's own modules (their {@code target/classes}, {@code test-classes} and
 * jars, wherever they come from) and minus the jars the plugin archive bundles: a real worker has only
 * Kafka on its classpath and must find the connector, pgjdbc and HikariCP through {@code plugin.path}.
 * It gets {@link CapturingLogProvider} as its SLF4J backend and writes its output to a log file
 * under {@code connector/target/faults/}.
 */
final class ChildJvm {
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    /** The plugin archive's name without its version: {@code <owner>-<name>-}, the Confluent Hub form. */
    static final String PLUGIN_ARCHIVE_PREFIX = "outboxrelay-outbox-relay-";
    /** The test JVM's start and its pid: two JVMs of the suite (it.forks) never share a directory. */
    private static final String STAMP = LocalDateTime.now().format(DateTimeFormatter.ofPattern("HHmmss"))
        + "-" + ProcessHandle.current().pid();

    private ChildJvm() {
    }

    /** A fresh directory for one child (its config, data and log): {@code connector/target/faults/<name>-<time>-<pid>-<n>}. */
    static Path workDir(String name) {
        Path dir = ProjectFiles.root().resolve("connector").resolve("target").resolve("faults")
            .resolve(name + "-" + STAMP + "-" + SEQUENCE.incrementAndGet());
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The unpacked plugin archive that {@code mvn package} builds: {@code connector/target/outboxrelay-outbox-relay-<version>/}. */
    static Path pluginPath() {
        Path target = ProjectFiles.root().resolve("connector").resolve("target");
        try (Stream<Path> entries = Files.list(target)) {
            List<Path> dirs = entries
                .filter(p -> Files.isDirectory(p) && p.getFileName().toString().startsWith(PLUGIN_ARCHIVE_PREFIX))
                .collect(Collectors.toList());
            if (dirs.size() != 1) {
                throw new IllegalStateException("expected one unpacked plugin archive " + PLUGIN_ARCHIVE_PREFIX + "<version>/"
                    + " under " + target + " (run mvn package first), found " + dirs);
            }
            return dirs.get(0);
        } catch (IOException e) {
            throw new UncheckedIOException("no " + target + "; run mvn package first", e);
        }
    }

    /**
     * The release archive {@code mvn package} leaves ({@code connector/target/outboxrelay-outbox-relay-<version>.zip})
     * unzipped into a fresh, empty plugin directory, as the README tells users to install it; returns that
     * directory, the worker's {@code plugin.path}.
     */
    static Path installReleaseArchive(String name) {
        Path zip = ProjectFiles.root().resolve("connector").resolve("target")
            .resolve(PLUGIN_ARCHIVE_PREFIX + Version.get() + ".zip");
        if (!Files.isRegularFile(zip)) {
            throw new IllegalStateException("no release archive " + zip + "; run mvn package first");
        }
        Path plugins = workDir(name).resolve("plugins");
        try (ZipFile z = new ZipFile(zip.toFile())) {
            for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements(); ) {
                ZipEntry entry = e.nextElement();
                Path out = plugins.resolve(entry.getName()).normalize();
                if (!out.startsWith(plugins)) {
                    throw new IllegalStateException(entry.getName() + " would land outside the plugin directory");
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(out);
                } else {
                    Files.createDirectories(out.getParent());
                    try (InputStream in = z.getInputStream(entry)) {
                        Files.copy(in, out);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return plugins;
    }

    /** JVM flags that open a child's platform MBean server on {@code port} of the loopback, without auth or TLS. */
    static List<String> jmxArgs(int port) {
        return List.of("-Dcom.sun.management.jmxremote.port=" + port, "-Dcom.sun.management.jmxremote.rmi.port=" + port,
            "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false",
            "-Dcom.sun.management.jmxremote.host=127.0.0.1", "-Djava.rmi.server.hostname=127.0.0.1");
    }

    /** A connection to the MBean server of a child started with {@link #jmxArgs}; close it after use. */
    static JMXConnector jmx(int port) throws IOException {
        return JMXConnectorFactory.connect(
            new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi"));
    }

    /** File names of the jars the plugin archive bundles (its {@code lib/}). */
    static Set<String> pluginJarNames(Path pluginPath) {
        try (Stream<Path> files = Files.walk(pluginPath)) {
            return files.filter(p -> p.toString().endsWith(".jar")).map(p -> p.getFileName().toString())
                .collect(Collectors.toSet());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** This JVM's test classpath without the project's modules and without {@code excludedJarNames}. */
    static List<String> kafkaClasspath(Set<String> excludedJarNames) {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path root = ProjectFiles.root();
        List<String> out = new ArrayList<>();
        for (String entry : cp.split(File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            Path p = Path.of(entry).toAbsolutePath().normalize();
            String unix = p.toString().replace('\\', '/');
            boolean ownModule = p.startsWith(root) || unix.contains("/io/outboxrelay/");
            // Jackson stays: the worker needs its own (REST, JSON converter); the plugin loads its bundled copy in isolation
            boolean bundled = excludedJarNames.contains(p.getFileName().toString()) && !unix.contains("/com/fasterxml/jackson/");
            boolean booter = p.getFileName().toString().startsWith("surefirebooter");
            if (!ownModule && !bundled && !booter) {
                out.add(p.toString());
            }
        }
        if (out.stream().noneMatch(e -> e.contains("connect-runtime"))) {
            throw new IllegalStateException("Kafka Connect is not on this JVM's classpath: " + cp);
        }
        return out;
    }

    /**
     * A directory holding only {@link CapturingLogProvider} (with the {@link LogCapture} it reads) and its
     * {@code ServiceLoader} entry: the one piece of the test helpers a child JVM gets.
     */
    static Path loggingClasspathEntry() {
        Path dir = ProjectFiles.root().resolve("connector").resolve("target").resolve("faults").resolve("child-logging");
        try {
            Path source = Path.of(CapturingLogProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            String pkg = CapturingLogProvider.class.getPackageName().replace('.', '/');
            Files.createDirectories(dir.resolve(pkg));
            List<String> prefixes = List.of(pkg + "/" + CapturingLogProvider.class.getSimpleName(),
                pkg + "/" + LogCapture.class.getSimpleName());
            if (Files.isDirectory(source)) { // the reactor's test-support/target/classes
                try (Stream<Path> files = Files.list(source.resolve(pkg))) {
                    for (Path f : files.collect(Collectors.toList())) {
                        String entry = pkg + "/" + f.getFileName();
                        if (prefixes.stream().anyMatch(entry::startsWith)) {
                            Files.copy(f, dir.resolve(entry), StandardCopyOption.REPLACE_EXISTING);
                        }
                    }
                }
            } else { // the test-support jar
                try (ZipFile jar = new ZipFile(source.toFile())) {
                    for (Enumeration<? extends ZipEntry> e = jar.entries(); e.hasMoreElements(); ) {
                        ZipEntry entry = e.nextElement();
                        if (prefixes.stream().anyMatch(entry.getName()::startsWith)) {
                            try (InputStream in = jar.getInputStream(entry)) {
                                Files.copy(in, dir.resolve(entry.getName()), StandardCopyOption.REPLACE_EXISTING);
                            }
                        }
                    }
                }
            }
            Path services = Files.createDirectories(dir.resolve("META-INF").resolve("services"));
            Files.writeString(services.resolve(SLF4JServiceProvider.class.getName()),
                CapturingLogProvider.class.getName() + "\n");
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Starts {@code java <jvmArgs> -cp <classpath> <mainClass> <args>} with stdout and stderr appended
     * to {@code log}.
     */
    static Process start(List<String> classpath, List<String> jvmArgs, String mainClass, List<String> args, Path log) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(String.join(File.pathSeparator, classpath));
        cmd.add(mainClass);
        cmd.addAll(args);
        try {
            return new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + mainClass, e);
        }
    }

    /** Runs a short-lived child to completion and fails when it does not exit 0. */
    static void run(List<String> classpath, String mainClass, List<String> args, Path log, Duration timeout) {
        Process p = start(classpath, List.of("-Xmx256m"), mainClass, args, log);
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(mainClass + " did not finish in " + timeout + "; see " + log);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(mainClass + " exited " + p.exitValue() + "; see " + log);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Stops a child: SIGTERM and a wait for a clean exit, or SIGKILL when {@code forcibly}. */
    static void stop(Process p, boolean forcibly, Duration timeout) {
        if (p == null || !p.isAlive()) {
            return;
        }
        if (forcibly) {
            p.destroyForcibly(); // SIGKILL on Linux: no shutdown hook, no flush, no lease release
        } else {
            p.destroy(); // SIGTERM: the JVM's shutdown hooks stop the worker cleanly
        }
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
                throw new IllegalStateException("process " + p.pid() + " did not exit within " + timeout
                    + " of " + (forcibly ? "SIGKILL" : "SIGTERM"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
