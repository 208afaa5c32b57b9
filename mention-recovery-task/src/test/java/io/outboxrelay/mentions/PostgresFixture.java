package io.outboxrelay.mentions;

import io.outboxrelay.postgres.LocalPostgres;
import io.outboxrelay.postgres.PostgresBuilder;
import io.outboxrelay.testsupport.PostgresServer;
import io.outboxrelay.testsupport.ProjectFiles;
import io.outboxrelay.testsupport.SqlScript;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * One embedded PostgreSQL per test class ({@link PostgresBuilder}), with helpers to create a fresh database,
 * apply the schema files, and log in as a least-privilege member of {@code outbox_relay}; test-only.
 */
final class PostgresFixture implements AutoCloseable {
    static final String RELAY_USER = "relay_it";
    static final String RELAY_PASSWORD = "relay-it-pw";

    private final LocalPostgres pg;
    private int databases;

    PostgresFixture() {
        pg = new PostgresBuilder().maxConnections(300).start();
    }

    /** A new empty database; returns its JDBC URL (without credentials). */
    String createDatabase() {
        return PostgresServer.of(pg).createEmptyDatabase("mentions_it_" + (++databases), "").jdbcUrl();
    }

    /** A new empty database in {@code encoding} (SQL_ASCII, WIN1252, ...); returns its JDBC URL. */
    String createDatabaseIn(String encoding) {
        PostgresServer server = PostgresServer.of(pg);
        String name = "mentions_it_" + (++databases);
        try (Connection c = DriverManager.getConnection(server.jdbcUrl("postgres"), server.user(), server.password());
             Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name + " ENCODING '" + encoding + "' LC_COLLATE 'C' LC_CTYPE 'C'"
                + " TEMPLATE template0");
        } catch (SQLException e) {
            throw new IllegalStateException("could not create a " + encoding + " database", e);
        }
        return server.jdbcUrl(name);
    }

    int port() {
        return pg.port();
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

    /** Sessions of the least-privilege login, for a store under test. */
    static PGSimpleDataSource relayDataSource(String url) {
        PGSimpleDataSource relay = new PGSimpleDataSource();
        relay.setUrl(url);
        relay.setUser(RELAY_USER);
        relay.setPassword(RELAY_PASSWORD);
        return relay;
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

    /** Applies schemas/sql/mentions.sql as the owner and creates the relay login. */
    void applyMentionsSchema(Connection owner) throws SQLException {
        SqlScript.run(owner, ProjectFiles.schemaFile("mentions.sql"));
        createRelayLogin(owner);
    }

    // chat rows, inserted as the owner (the chat server's role)

    static void channel(Connection c, String id, boolean mandatory) throws SQLException {
        exec(c, "INSERT INTO channels (id, name, mandatory_subscription) VALUES (?, ?, ?)", id, "#" + id, mandatory);
        exec(c, "INSERT INTO topics (id, channel_id) VALUES (?, ?)", "t-" + id, id);
    }

    static void account(Connection c, String id, String handle, String kind, String homeChannelId) throws SQLException {
        exec(c, "INSERT INTO accounts (id, handle, kind, home_channel_id) VALUES (?, ?, ?, ?)", id, handle, kind,
            homeChannelId);
    }

    static void member(Connection c, String channelId, String accountId, boolean subscribed) throws SQLException {
        exec(c, "INSERT INTO channel_members (channel_id, account_id, subscribed) VALUES (?, ?, ?)", channelId,
            accountId, subscribed);
    }

    /** Inserts a message into the channel's topic; returns its seq. */
    static long message(Connection c, String id, String channelId, String authorId, String text, long atUnixMs)
        throws SQLException {
        String blocks = "[{\"type\":\"text\",\"text\":\"" + text + "\"}]";
        return queryLong(c, "INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) "
            + "VALUES (?, ?, ?, ?::jsonb, ?) RETURNING seq", id, "t-" + channelId, authorId, blocks, atUnixMs);
    }

    static void session(Connection c, String id, String accountId, long lastSeenUnixMs, Long endedUnixMs)
        throws SQLException {
        exec(c, "INSERT INTO agent_sessions (id, account_id, started_at_unix_ms, last_seen_unix_ms, ended_at_unix_ms) "
            + "VALUES (?, ?, ?, ?, ?)", id, accountId, lastSeenUnixMs - 1_000, lastSeenUnixMs, endedUnixMs);
    }

    static void hold(Connection c, String messageId, String sessionId) throws SQLException {
        exec(c, "INSERT INTO held_messages (message_id, session_id) VALUES (?, ?)", messageId, sessionId);
    }

    /** The message's marker, or null. */
    static Long routedAt(Connection c, String messageId) throws SQLException {
        long v = queryLong(c, "SELECT mentions_routed_at FROM messages WHERE id = ?", messageId);
        return v == Long.MIN_VALUE ? null : v;
    }

    @Override
    public void close() {
        pg.close();
    }
}
