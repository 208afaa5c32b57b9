package io.outboxrelay.connector.faults;

import io.outboxrelay.testsupport.ExtraPostgres;
import io.outboxrelay.testsupport.TestDatabase;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PostgreSQL server of a fault test's own (zonky's embedded PostgreSQL 17 binaries, so a machine with
 * only a JDK runs it) that the test can take away and bring back: {@link #stopImmediately()} is
 * {@code pg_ctl stop -m immediate} (every backend dies at once, no checkpoint, crash recovery at the
 * next start), {@link #start()} starts the same data directory on the same port again.
 *
 * <p>zonky starts its binaries through {@code pg_ctl}, under {@code unshare -U} when running as root;
 * this does the same, with the {@code pg_ctl} next to the running {@code postgres} binary and the
 * server options the first start recorded in {@code postmaster.opts}.
 */
final class RestartablePostgres implements AutoCloseable {
    private static final Pattern QUOTED = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");

    private final ExtraPostgres postgres;
    private final Path dataDir;
    private final Path pgCtl;
    private final String serverOptions;
    private final Path log;
    private final int port;

    /** Set for a standby made by {@link #startStandby}: a server of ours that zonky knows nothing of. */
    private final boolean standby;

    private RestartablePostgres(Path dataDir, Path pgCtl, String serverOptions, Path log, int port) {
        this.postgres = null;
        this.dataDir = dataDir;
        this.pgCtl = pgCtl;
        this.serverOptions = serverOptions;
        this.log = log;
        this.port = port;
        this.standby = true;
    }

    private RestartablePostgres(ExtraPostgres postgres, Path dataDir, Path log) {
        this.postgres = postgres;
        this.dataDir = dataDir;
        this.log = log;
        this.port = postgres.port();
        this.standby = false;
        try {
            long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
            Path postgresBinary = Path.of("/proc/" + pid + "/exe").toRealPath();
            this.pgCtl = postgresBinary.resolveSibling("pg_ctl");
            this.serverOptions = serverOptions(Files.readString(dataDir.resolve("postmaster.opts")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find pg_ctl of the server in " + dataDir, e);
        }
    }

    static RestartablePostgres start(String name) {
        Path dir = ChildJvm.workDir("postgres-" + name);
        Path data = dir.resolve("data");
        ExtraPostgres pg = ExtraPostgres.start(builder -> builder
            .setDataDirectory(data)
            .setCleanDataDirectory(true)
            // zonky turns it off; a crash would then forget commits it already acknowledged (stamps
            // come back unstamped and are delivered again), which is the database's doing, not the relay's
            .setServerConfig("synchronous_commit", "on")
            .setServerConfig("max_connections", "100"));
        return new RestartablePostgres(pg, data, dir.resolve("pg_ctl.log"));
    }

    int port() {
        return port;
    }

    /**
     * A streaming standby of this server, on a port of its own, from a copy of the data directory (the
     * server is stopped cleanly for the copy and started again: a clean shutdown's directory is a base
     * backup, no pg_basebackup needed). With {@code synchronous}, this server then waits for the standby at
     * every commit (synchronous_standby_names), so nothing it acknowledged is missing after a promotion.
     */
    RestartablePostgres startStandby(String name, boolean synchronous) {
        Path dir = ChildJvm.workDir("postgres-" + name);
        Path data = dir.resolve("data");
        pgCtl(List.of("-D", dataDir.toString(), "-m", "fast", "-w", "-t", "60", "stop"));
        try {
            deleteTree(data);
            Files.createDirectories(data.getParent());
            copyTree(dataDir, data);
            Files.deleteIfExists(data.resolve("postmaster.pid"));
            Files.writeString(data.resolve("standby.signal"), "");
            Files.writeString(data.resolve("postgresql.auto.conf"), "primary_conninfo = 'host=localhost port=" + port
                + " user=postgres application_name=" + name + "'\n", java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy " + dataDir + " for a standby", e);
        }
        start();
        int standbyPort = freePort();
        RestartablePostgres standby = new RestartablePostgres(data, pgCtl,
            serverOptions.replace("'-p' '" + port + "'", "'-p' '" + standbyPort + "'"), dir.resolve("pg_ctl.log"),
            standbyPort);
        standby.start();
        if (synchronous) {
            execute("ALTER SYSTEM SET synchronous_standby_names = '" + name + "'");
            execute("SELECT pg_reload_conf()");
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String wanted = synchronous ? "sync" : "async";
        while (!wanted.equals(replicationState(name))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("standby " + name + " is not streaming (" + wanted + ") within 60 s");
            }
            ChildJvm.sleep(100);
        }
        return standby;
    }

    /** {@code pg_ctl promote}: a standby becomes a primary (its timeline forks), and waits until it is one. */
    void promote() {
        pgCtl(List.of("-D", dataDir.toString(), "-w", "-t", "60", "promote"));
    }

    private String replicationState(String standbyName) {
        try (Connection c = connect(); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = ? AND state = 'streaming'")) {
            ps.setString(1, standbyName);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            return null;
        }
    }

    private void execute(String sql) {
        try (Connection c = connect(); java.sql.Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/postgres", "postgres", null);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                // a directory copies as an empty one with its attributes: PostgreSQL wants 0700 on its data directory
                Files.copy(p, to.resolve(from.relativize(p).toString()), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    private static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new database with the project's schema files applied, as the superuser. */
    TestDatabase createDatabase(String name) {
        return postgres.createDatabase(name, "");
    }

    /** {@code pg_ctl stop -m immediate}: the server and every session vanish without a checkpoint. */
    void stopImmediately() {
        pgCtl(List.of("-D", dataDir.toString(), "-m", "immediate", "-w", "-t", "30", "stop"));
    }

    /** Starts the same server again (crash recovery included) and waits until it accepts connections. */
    void start() {
        pgCtl(List.of("-D", dataDir.toString(), "-o", serverOptions, "-l", log.toString(), "-w", "-t", "60",
            "start"));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/postgres",
                "postgres", null)) {
                if (c.isValid(5)) {
                    return;
                }
            } catch (SQLException notYet) {
                ChildJvm.sleep(200);
            }
        }
        throw new IllegalStateException("PostgreSQL did not accept connections within 60 s of starting; see " + log);
    }

    boolean running() {
        return Files.exists(dataDir.resolve("postmaster.pid"));
    }

    @Override
    public void close() {
        if (standby) {
            if (running()) {
                pgCtl(List.of("-D", dataDir.toString(), "-m", "immediate", "-w", "-t", "30", "stop"));
            }
            return;
        }
        if (!running()) {
            start(); // zonky's close stops the server through pg_ctl and expects it up
        }
        postgres.close();
    }

    private void pgCtl(List<String> args) {
        List<String> cmd = new ArrayList<>();
        if (LinuxUtils.isUnshareAvailable()) {
            cmd.addAll(List.of("unshare", "-U")); // as zonky does: PostgreSQL refuses to run as root
        }
        cmd.add(pgCtl.toString());
        cmd.addAll(args);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("pg_ctl " + args + " did not finish; see " + log);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("pg_ctl " + args + " exited " + p.exitValue() + "; see " + log);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The options of the first start, from {@code postmaster.opts} ({@code /path/postgres "-D" "dir" "-p"
     * "5432" "-c" "fsync=off" ...}), without the binary and {@code -D}, single-quoted for pg_ctl's shell.
     */
    static String serverOptions(String postmasterOpts) {
        List<String> tokens = new ArrayList<>();
        Matcher m = QUOTED.matcher(postmasterOpts);
        while (m.find()) {
            tokens.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).equals("-D")) {
                i++;
                continue;
            }
            if (out.length() > 0) {
                out.append(' ');
            }
            out.append('\'').append(tokens.get(i).replace("'", "'\\''")).append('\'');
        }
        return out.toString();
    }
}
