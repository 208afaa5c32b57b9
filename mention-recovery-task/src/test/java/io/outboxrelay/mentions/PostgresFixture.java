package io.outboxrelay.mentions;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * One embedded PostgreSQL per test class, with helpers to create a fresh database, apply the schema
 * files, and log in as a least-privilege member of {@code outbox_relay}; test-only.
 */
final class PostgresFixture implements AutoCloseable {
    static final String RELAY_USER = "relay_it";
    static final String RELAY_PASSWORD = "relay-it-pw";

    private final EmbeddedPostgres pg;
    private int databases;

    PostgresFixture() {
        try {
            pg = EmbeddedPostgres.builder().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new empty database; returns its JDBC URL (without credentials). */
    String createDatabase() throws SQLException {
        String name = "mentions_it_" + (++databases);
        try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        }
        return "jdbc:postgresql://localhost:" + pg.getPort() + "/" + name;
    }

    /** A superuser session (the schema owner, as an operator applying migrations). */
    Connection owner(String url) throws SQLException {
        return DriverManager.getConnection(url, "postgres", "postgres");
    }

    /** A login role that has only what schemas/sql/mentions.sql grants to outbox_relay. */
    void createRelayLogin(Connection owner) throws SQLException {
        try (Statement st = owner.createStatement()) {
            st.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '" + RELAY_USER + "') THEN "
                + "CREATE ROLE " + RELAY_USER + " LOGIN PASSWORD '" + RELAY_PASSWORD + "' IN ROLE outbox_relay; "
                + "END IF; END $$");
        }
    }

    Connection relay(String url) throws SQLException {
        return DriverManager.getConnection(url, RELAY_USER, RELAY_PASSWORD);
    }

    static long queryLong(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new AssertionError("no row for " + sql);
                }
                long v = rs.getLong(1);
                return rs.wasNull() ? Long.MIN_VALUE : v;
            }
        }
    }

    static void exec(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            ps.execute();
        }
    }

    @Override
    public void close() throws IOException {
        pg.close();
    }
}
