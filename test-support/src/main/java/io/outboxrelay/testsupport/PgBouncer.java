package io.outboxrelay.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real PgBouncer in transaction mode in front of one test database, started as a process from the
 * {@code pgbouncer} binary on the PATH (Debian: {@code apt-get install pgbouncer}). Tests that use it assume
 * {@link #installed()}: the project's own set-up needs only a JDK, and no Maven artifact carries PgBouncer.
 * PgBouncer refuses to run as root, so as root it runs as {@code nobody}.
 */
public final class PgBouncer implements AutoCloseable {
    private static final Path BINARY = findBinary();
    private final Process process;
    private final Path dir;
    private final int port;

    private PgBouncer(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /** Whether a {@code pgbouncer} binary is on the PATH. */
    public static boolean installed() {
        return BINARY != null;
    }

    /** Starts PgBouncer, pool_mode=transaction, for the database's user, and waits until it accepts connections. */
    public static PgBouncer inFrontOf(TestDatabase db) throws IOException, InterruptedException {
        URI server = URI.create(db.jdbcUrl().substring("jdbc:".length()));
        int port = freePort();
        Path dir = Files.createTempDirectory("pgbouncer");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.writeString(dir.resolve("users.txt"),
            quote(db.user()) + " " + quote(db.password() == null ? "" : db.password()) + "\n");
        Files.writeString(dir.resolve("pgbouncer.ini"), String.join("\n",
            "[databases]",
            "* = host=" + server.getHost() + " port=" + server.getPort(),
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            "listen_port = " + port,
            "unix_socket_dir =",
            "auth_type = trust",
            "auth_file = " + dir.resolve("users.txt"),
            "pool_mode = transaction",
            "default_pool_size = 4",
            "logfile = " + dir.resolve("pgbouncer.log"),
            "") + "\n");
        for (Path f : List.of(dir.resolve("users.txt"), dir.resolve("pgbouncer.ini"))) {
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        }
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("runuser", "-u", "nobody", "--"));
        }
        command.addAll(List.of(BINARY.toString(), dir.resolve("pgbouncer.ini").toString()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(dir.resolve("stdout.log").toFile()).start();
        PgBouncer bouncer = new PgBouncer(process, dir, port);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!bouncer.accepting()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                String log = Files.readString(dir.resolve("stdout.log"));
                bouncer.close();
                throw new IllegalStateException("PgBouncer did not start: " + log);
            }
            Thread.sleep(50);
        }
        return bouncer;
    }

    /** The JDBC URL of the database through PgBouncer; {@code prepareThreshold=0} as its docs ask before 1.21. */
    public String jdbcUrl(TestDatabase db) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + db.name() + "?prepareThreshold=0&sslmode=disable";
    }

    private boolean accepting() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
    }

    private static String quote(String s) {
        return "\"" + s.replace("\"", "\"\"") + "\"";
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static Path findBinary() {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(d.isEmpty() ? "." : d, "pgbouncer");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        for (String d : List.of("/usr/sbin", "/usr/local/sbin", "/usr/bin")) {
            Path p = Path.of(d, "pgbouncer");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
