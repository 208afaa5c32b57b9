package io.outboxrelay.quickstart;

import io.outboxrelay.common.PsqlScript;
import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.postgres.Rows;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

/**
 * The quickstart's database: a throw-away PostgreSQL 17 server ({@link PostgresBuilder}) on a well-known port
 * when it is free, with the project's schema files applied and a least-privilege login role for the connector.
 * Its data directory is deleted on {@link #close()}.
 */
final class QuickstartDatabase implements AutoCloseable {
    static final int PREFERRED_PORT = 55432;
    static final String DATABASE = "postgres";
    static final String SUPERUSER = "postgres";
    /** The connector logs in as this role, a member of the outbox_relay group the schema files grant to. */
    static final String RELAY_ROLE = "relay";
    static final String RELAY_PASSWORD = "relay-quickstart";

    private final LocalPostgres postgres;

    private QuickstartDatabase(LocalPostgres postgres) {
        this.postgres = postgres;
    }

    static QuickstartDatabase start() throws IOException {
        return new QuickstartDatabase(new PostgresBuilder()
            .port(Ports.preferred(PREFERRED_PORT))
            .stopAtExit(false) // Quickstart stops it last, after Connect
            .maxConnections(100)
            .passwordsExceptSuperuser() // a wrong connection.password is refused, as on a real server
            .start());
    }

    int port() {
        return postgres.port();
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
        return postgres.connect(DATABASE);
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
            try (ResultSet rs = ps.executeQuery()) {
                return Rows.asStrings(rs);
            }
        }
    }

    @Override
    public void close() {
        postgres.close();
    }
}
