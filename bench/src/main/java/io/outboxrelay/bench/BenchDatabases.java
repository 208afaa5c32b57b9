package io.outboxrelay.bench;

import io.outboxrelay.common.PsqlScript;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.postgres.Rows;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The benchmark's databases on its one PostgreSQL 17 server ({@link PostgresBuilder}, a real server process)
 * with {@code wal_level=logical} for Debezium and durable commits as in production ({@code fsync},
 * {@code synchronous_commit} and {@code full_page_writes} on, checked at start). Every run gets a database of
 * its own with the project's schema files applied, and drops it afterwards.
 */
final class BenchDatabases implements AutoCloseable {
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private final LocalPostgres postgres;
    private final Path home;

    private BenchDatabases(LocalPostgres postgres, Path home) {
        this.postgres = postgres;
        this.home = home;
    }

    static BenchDatabases start(Path home, Path workDir) {
        LocalPostgres pg = new PostgresBuilder()
            .fsync(true)
            .dataDirectory(workDir.resolve("pgdata"))
            .maxConnections(200)
            .setting("shared_buffers", "1GB")
            .setting("max_wal_size", "4GB")
            .setting("wal_level", "logical")
            .setting("max_wal_senders", "10")
            .setting("max_replication_slots", "10")
            .setting("shared_preload_libraries", "pg_stat_statements")
            .setting("pg_stat_statements.max", "1000")
            .setting("pg_stat_statements.track", "all")
            .start();
        return new BenchDatabases(pg, home);
    }

    /** The server's durability settings as it reports them ({@code SHOW}), in {@link PostgresBuilder#DURABLE}'s keys. */
    Map<String, String> durability() {
        return postgres.settings(PostgresBuilder.DURABLE.keySet());
    }

    /** What the data directory is stored on (e.g. ext4, tmpfs: an fsync on tmpfs costs nothing). */
    String dataFileSystem() {
        try {
            return Files.getFileStore(postgres.dataDirectory()).type();
        } catch (IOException e) {
            return "unknown";
        }
    }

    int port() {
        return postgres.port();
    }

    /** The postmaster's process id, for CPU accounting; -1 when unknown. */
    long postmasterPid() {
        return postgres.postmasterPid();
    }

    /** A new database with schemas/sql/outbox.sql (and mentions.sql) applied. */
    Db createDatabase(String prefix) {
        String name = (prefix + "_" + DATABASES.incrementAndGet()).toLowerCase().replaceAll("[^a-z0-9_]", "_");
        try (Connection c = postgres.connect("postgres"); Statement st = c.createStatement()) {
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
        try (Connection c = postgres.connect("postgres"); Statement st = c.createStatement()) {
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
    void shutdown() {
        postgres.close();
    }

    @Override
    public void close() {
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
                return Rows.asStrings(rs);
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
