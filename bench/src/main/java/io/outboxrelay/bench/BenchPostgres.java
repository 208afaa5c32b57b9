package io.outboxrelay.bench;

import io.outboxrelay.common.PsqlScript;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one PostgreSQL 17 server of the benchmark (zonky's embedded binaries, a real server process)
 * with {@code wal_level=logical} for Debezium and durable commits as in production: {@code fsync=on},
 * {@code synchronous_commit=on}, {@code full_page_writes=on} (zonky starts the server with {@code -F},
 * fsync off, and synchronous_commit off). Every run gets a database of its own with the project's
 * schema files applied, and drops it afterwards.
 */
final class BenchPostgres implements AutoCloseable {
    private static final AtomicInteger DATABASES = new AtomicInteger();

    /** zonky waits 10 s by default; initdb plus the first start can take longer on a loaded CI machine. */
    private static final Duration STARTUP_WAIT = Duration.ofSeconds(90);

    private final EmbeddedPostgres postgres;
    private final Path dataDir;
    private final Path home;

    private BenchPostgres(EmbeddedPostgres postgres, Path dataDir, Path home) {
        this.postgres = postgres;
        this.dataDir = dataDir;
        this.home = home;
    }

    static BenchPostgres start(Path home, Path workDir) throws IOException {
        Path dataDir = workDir.resolve("pgdata");
        Path socketDir = Files.createTempDirectory("outbox-relay-bench-pg");
        socketDir.toFile().deleteOnExit();
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
            .setDataDirectory(dataDir)
            .setCleanDataDirectory(true)
            // zonky puts -F (fsync=off) on the server's command line before these -c options; a later
            // option of the same source wins, so this turns fsync back on (checked by durability())
            .setServerConfig("fsync", "on")
            .setServerConfig("synchronous_commit", "on")
            .setServerConfig("full_page_writes", "on")
            .setServerConfig("max_connections", "200")
            // not /tmp: a lock file a server of another user left there for this port would stop this one
            .setServerConfig("unix_socket_directories", socketDir.toString())
            .setServerConfig("shared_buffers", "1GB")
            .setServerConfig("max_wal_size", "4GB")
            .setServerConfig("wal_level", "logical")
            .setServerConfig("max_wal_senders", "10")
            .setServerConfig("max_replication_slots", "10")
            .setServerConfig("shared_preload_libraries", "pg_stat_statements")
            .setServerConfig("pg_stat_statements.max", "1000")
            .setServerConfig("pg_stat_statements.track", "all")
            .setPGStartupWait(STARTUP_WAIT)
            .start();
        BenchPostgres bench = new BenchPostgres(pg, dataDir, home);
        Map<String, String> durability = bench.durability();
        if (!DURABLE.equals(durability)) {
            bench.close();
            throw new IllegalStateException("PostgreSQL did not start with durable commits: " + durability);
        }
        return bench;
    }

    /** The settings that make a commit durable, as the benchmark requires them. */
    static final Map<String, String> DURABLE =
        Map.of("fsync", "on", "synchronous_commit", "on", "full_page_writes", "on");

    /** The server's durability settings as it reports them ({@code SHOW}), in {@link #DURABLE}'s keys. */
    Map<String, String> durability() {
        Map<String, String> shown = new TreeMap<>();
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            for (String setting : new TreeMap<>(DURABLE).keySet()) {
                try (ResultSet rs = st.executeQuery("SHOW " + setting)) {
                    rs.next();
                    shown.put(setting, rs.getString(1));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("SHOW fsync etc.: " + e.getMessage(), e);
        }
        return shown;
    }

    /** What the data directory is stored on (e.g. ext4, tmpfs: an fsync on tmpfs costs nothing). */
    String dataFileSystem() {
        try {
            return Files.getFileStore(dataDir).type();
        } catch (IOException e) {
            return "unknown";
        }
    }

    int port() {
        return postgres.getPort();
    }

    /** The postmaster's process id (first line of postmaster.pid), for CPU accounting; -1 when unknown. */
    long postmasterPid() {
        try {
            return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** A new database with schemas/sql/outbox.sql (and mentions.sql) applied. */
    Db createDatabase(String prefix) {
        String name = (prefix + "_" + DATABASES.incrementAndGet()).toLowerCase().replaceAll("[^a-z0-9_]", "_");
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("CREATE DATABASE " + name + ": " + e.getMessage(), e);
        }
        Db db = new Db(name, "jdbc:postgresql://localhost:" + port() + "/" + name, port());
        db.runScript(home.resolve("schemas/sql/outbox.sql"));
        db.runScript(home.resolve("schemas/sql/mentions.sql"));
        db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        return db;
    }

    /** Drops a run's database (its replication slots first, which would otherwise keep WAL forever). */
    void dropDatabase(Db db) {
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (true) {
                // a deleted connector's walsender may hold its slot for a moment
                st.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = '"
                    + db.name() + "' AND NOT active");
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_replication_slots WHERE database = '"
                    + db.name() + "'")) {
                    rs.next();
                    if (rs.getLong(1) == 0 || System.nanoTime() > deadline) {
                        break;
                    }
                }
                Thread.sleep(200);
            }
            st.execute("DROP DATABASE IF EXISTS " + db.name() + " WITH (FORCE)");
        } catch (SQLException e) {
            System.err.println("bench: could not drop database " + db.name() + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the server (also what {@link #close()} does); for the benchmark's Ctrl-C hook. */
    void shutdown() throws IOException {
        postgres.close();
    }

    @Override
    public void close() throws IOException {
        shutdown();
    }

    /** One database of the server. */
    record Db(String name, String jdbcUrl, int port) {

        Connection connect() throws SQLException {
            return DriverManager.getConnection(jdbcUrl, "postgres", "");
        }

        void runScript(Path file) {
            execute(PsqlScript.render(file, Map.of()));
        }

        void execute(String sql) {
            try (Connection c = connect(); Statement st = c.createStatement()) {
                st.execute(sql);
            } catch (SQLException e) {
                throw new IllegalStateException((sql.length() > 120 ? sql.substring(0, 120) : sql) + ": "
                    + e.getMessage(), e);
            }
        }

        long queryLong(String sql) {
            try (Connection c = connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
                rs.next();
                return rs.getLong(1);
            } catch (SQLException e) {
                throw new IllegalStateException(sql + ": " + e.getMessage(), e);
            }
        }

        List<List<String>> query(String sql) {
            try (Connection c = connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
                List<List<String>> rows = new ArrayList<>();
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    List<String> row = new ArrayList<>(n);
                    for (int i = 1; i <= n; i++) {
                        row.add(rs.getString(i));
                    }
                    rows.add(row);
                }
                return rows;
            } catch (SQLException e) {
                throw new IllegalStateException(sql + ": " + e.getMessage(), e);
            }
        }

        /**
         * Commits events {@code [from, from + count)} of the benchmark's event set (see {@link BenchEvents}),
         * {@code perTxn} events per transaction, one transaction after the other from one connection (so the
         * WAL holds them in id order, not interleaved), then ANALYZE and CHECKPOINT.
         */
        void insertBacklog(long from, long count, int perTxn) {
            try {
                insertRange(from, count, perTxn);
            } catch (SQLException e) {
                throw new IllegalStateException("writing the backlog failed: " + e.getMessage(), e);
            }
            execute("ANALYZE events");
            execute("CHECKPOINT");
        }

        private void insertRange(long from, long count, int perTxn) throws SQLException {
            try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(BenchEvents.INSERT_RANGE_SQL)) {
                for (long start = from; start < from + count; start += perTxn) {
                    ps.setLong(1, start);
                    ps.setLong(2, Math.min(start + perTxn, from + count) - 1);
                    ps.executeUpdate();
                }
            }
        }
    }
}
