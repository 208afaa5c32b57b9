package io.outboxrelay.quickstart;

import io.outboxrelay.common.PsqlScript;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A throw-away PostgreSQL 17 server (zonky's embedded binaries) with the project's schema files applied
 * and a least-privilege login role for the connector. Its data directory is deleted on {@link #close()}.
 */
final class QuickstartPostgres implements AutoCloseable {
    static final int PREFERRED_PORT = 55432;
    static final String DATABASE = "postgres";
    static final String SUPERUSER = "postgres";
    /** The connector logs in as this role, a member of the outbox_relay group the schema files grant to. */
    static final String RELAY_ROLE = "relay";
    static final String RELAY_PASSWORD = "relay-quickstart";

    /** zonky waits 10 s by default; initdb plus the first start can take longer on a loaded CI machine. */
    private static final Duration STARTUP_WAIT = Duration.ofSeconds(90);

    private final EmbeddedPostgres postgres;
    private final Path socketDir;

    private QuickstartPostgres(EmbeddedPostgres postgres, Path socketDir) {
        this.postgres = postgres;
        this.socketDir = socketDir;
    }

    static QuickstartPostgres start() throws IOException {
        return start(Ports.preferred(PREFERRED_PORT));
    }

    static QuickstartPostgres start(int port) throws IOException {
        Path socketDir = Files.createTempDirectory("outbox-relay-quickstart-pg");
        socketDir.toFile().deleteOnExit(); // if the server does not start; close() deletes it otherwise
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
            .setPort(port)
            .setRegisterShutdownHook(false) // Quickstart stops it last, after Connect
            .setServerConfig("max_connections", "100")
            // not /tmp: a lock file a server of another user left there for this port would stop this one
            .setServerConfig("unix_socket_directories", socketDir.toString())
            .setPGStartupWait(STARTUP_WAIT)
            .start();
        return new QuickstartPostgres(pg, socketDir);
    }

    int port() {
        return postgres.getPort();
    }

    String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port() + "/" + DATABASE;
    }

    /** Applies schemas/sql/outbox.sql and mentions.sql, then creates the connector's login role. */
    void applySchema(Path home) {
        for (String file : List.of("outbox.sql", "mentions.sql")) {
            Path path = home.resolve("schemas").resolve("sql").resolve(file);
            try {
                execute(PsqlScript.render(path, Map.of()));
            } catch (SQLException e) {
                throw new IllegalStateException("applying " + path + " failed: " + e.getMessage(), e);
            }
        }
        try {
            execute("CREATE ROLE " + RELAY_ROLE + " LOGIN PASSWORD '" + RELAY_PASSWORD + "' IN ROLE outbox_relay");
        } catch (SQLException e) {
            throw new IllegalStateException("creating role " + RELAY_ROLE + " failed: " + e.getMessage(), e);
        }
    }

    Connection connect() throws SQLException {
        return postgres.getPostgresDatabase().getConnection();
    }

    void execute(String sql) throws SQLException {
        try (Connection c = connect(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    /** The first row of a query, as longs (null as 0). */
    long[] queryLongs(String sql, Object... params) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                int n = rs.getMetaData().getColumnCount();
                long[] out = new long[n];
                if (rs.next()) {
                    for (int i = 0; i < n; i++) {
                        out[i] = rs.getLong(i + 1);
                    }
                }
                return out;
            }
        }
    }

    /** Every row of a query, as strings. */
    List<List<String>> queryStrings(String sql, Object... params) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            List<List<String>> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    List<String> row = new ArrayList<>(n);
                    for (int i = 1; i <= n; i++) {
                        row.add(rs.getString(i));
                    }
                    rows.add(row);
                }
            }
            return rows;
        }
    }

    @Override
    public void close() throws IOException {
        postgres.close();
        Files.deleteIfExists(socketDir);
    }
}
