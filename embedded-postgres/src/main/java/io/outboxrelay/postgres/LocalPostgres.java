package io.outboxrelay.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * A PostgreSQL server process on this machine, started by {@link PostgresBuilder} (or a standby of one). The
 * superuser {@code postgres} logs in without a password from localhost unless {@code pg_hba.conf} says otherwise.
 *
 * <p>It can be taken away and brought back: {@link #stopImmediately()} is {@code pg_ctl stop -m immediate}
 * (every backend dies at once, no checkpoint, crash recovery at the next start), {@link #start()} starts the
 * same data directory on the same port again. {@link #startStandby} makes a streaming standby of it, which
 * {@link #promote()} turns into a primary.
 */
public final class LocalPostgres implements AutoCloseable {
    private static final Duration START_WAIT = Duration.ofSeconds(60);

    /** Null for a standby: a server of ours that zonky knows nothing of. */
    private final EmbeddedPostgres zonky;
    private final Path dataDir;
    private final Path socketDir;
    private final int port;
    private PgCtl pgCtl;
    private boolean closed;

    LocalPostgres(EmbeddedPostgres zonky, Path dataDir, Path socketDir) {
        this.zonky = zonky;
        this.dataDir = dataDir;
        this.socketDir = socketDir;
        this.port = zonky.getPort();
    }

    private LocalPostgres(PgCtl pgCtl, Path dataDir, int port) {
        this.zonky = null;
        this.dataDir = dataDir;
        this.socketDir = null;
        this.port = port;
        this.pgCtl = pgCtl;
    }

    public int port() {
        return port;
    }

    /** {@code jdbc:postgresql://localhost:<port>/<database>}. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://localhost:" + port + "/" + database;
    }

    /** The superuser. */
    public String user() {
        return "postgres";
    }

    /** A session as the superuser; close it after use. */
    public Connection connect(String database) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(database), user(), null);
    }

    public Path dataDirectory() {
        return dataDir;
    }

    /** The postmaster's process id (first line of {@code postmaster.pid}), for CPU accounting; -1 when not running. */
    public long postmasterPid() {
        try {
            return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The settings as the server reports them ({@code SHOW name}), by name. */
    public Map<String, String> settings(Collection<String> names) {
        Map<String, String> shown = new TreeMap<>();
        try (Connection c = connect("postgres"); Statement st = c.createStatement()) {
            for (String name : names) {
                try (ResultSet rs = st.executeQuery("SHOW " + name)) {
                    rs.next();
                    shown.put(name, rs.getString(1));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("SHOW " + names + ": " + e.getMessage(), e);
        }
        return shown;
    }

    /** {@code pg_ctl stop -m immediate}: the server and every session vanish without a checkpoint. */
    public void stopImmediately() {
        pgCtl().stop("immediate");
    }

    /** Starts the same server again (crash recovery included) and waits until it accepts connections. */
    public void start() {
        pgCtl().start();
        await(START_WAIT, this::acceptsConnections, "PostgreSQL did not accept connections within 60 s of starting; see "
            + pgCtl().log());
    }

    /** {@code pg_ctl promote}: a standby becomes a primary (its timeline forks); returns once it is one. */
    public void promote() {
        pgCtl().promote();
    }

    public boolean running() {
        return Files.exists(dataDir.resolve("postmaster.pid"));
    }

    /**
     * A streaming standby of this server, on a free port, in {@code standbyDataDir}, named {@code name}
     * (its {@code application_name}). This server is stopped cleanly for a copy of its data directory and
     * started again: a clean shutdown's directory is a base backup, no {@code pg_basebackup} needed. With
     * {@code synchronous}, this server then waits for the standby at every commit
     * ({@code synchronous_standby_names}), so nothing it acknowledged is missing after a promotion. Returns
     * once the standby streams (in the wanted mode).
     */
    public LocalPostgres startStandby(String name, Path standbyDataDir, boolean synchronous) {
        pgCtl().stop("fast");
        StandbyDirectory.copy(dataDir, standbyDataDir, port, name);
        start();
        int standbyPort = StandbyDirectory.freePort();
        PgCtl standbyCtl = pgCtl().forCopy(standbyDataDir, port, standbyPort,
            standbyDataDir.resolveSibling(standbyDataDir.getFileName() + "-pg_ctl.log"));
        LocalPostgres standby = new LocalPostgres(standbyCtl, standbyDataDir, standbyPort);
        standby.start();
        Runtime.getRuntime().addShutdownHook(new Thread(standby::close));
        if (synchronous) {
            execute("ALTER SYSTEM SET synchronous_standby_names = '" + name + "'");
            execute("SELECT pg_reload_conf()");
        }
        String wanted = synchronous ? "sync" : "async";
        await(START_WAIT, () -> wanted.equals(replicationState(name)),
            "standby " + name + " is not streaming (" + wanted + ") within 60 s");
        return standby;
    }

    private PgCtl pgCtl() {
        if (pgCtl == null) {
            pgCtl = PgCtl.of(dataDir, dataDir.resolveSibling(dataDir.getFileName() + "-pg_ctl.log"));
        }
        return pgCtl;
    }

    private boolean acceptsConnections() {
        try (Connection c = connect("postgres")) {
            return c.isValid(5);
        } catch (SQLException notYet) {
            return false;
        }
    }

    private String replicationState(String standbyName) {
        try (Connection c = connect("postgres"); PreparedStatement ps = c.prepareStatement(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = ? AND state = 'streaming'")) {
            ps.setString(1, standbyName);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            return null;
        }
    }

    private void execute(String sql) {
        try (Connection c = connect("postgres"); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    /** Stops the server (a standby immediately) and deletes what the builder created. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (zonky == null) {
            if (running()) {
                pgCtl().stop("immediate");
            }
            return;
        }
        try {
            if (pgCtl != null && !running()) {
                start(); // zonky's close stops the server through pg_ctl and expects it up
            }
            zonky.close();
            Files.deleteIfExists(socketDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void await(Duration timeout, BooleanSupplier condition, String failure) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(failure);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
