package io.outboxrelay.connector.integration;

import io.outboxrelay.testsupport.ProjectFiles;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/**
 * A PostgreSQL server of a test class's own, for settings the shared {@link TestPostgres} server must
 * not get (TLS, password authentication). Close it in {@code @AfterAll}.
 */
public final class ExtraPostgres implements AutoCloseable {
    private final EmbeddedPostgres postgres;
    private boolean closed;

    private ExtraPostgres(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    /**
     * @param serverConfig extra {@code postgresql.conf} settings
     * @param pgHba the content of {@code pg_hba.conf}, or null to keep zonky's (trust for everyone)
     */
    public static ExtraPostgres start(Map<String, String> serverConfig, String pgHba) {
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
            .setServerConfig("fsync", "off")
            .setServerConfig("max_connections", "50");
        serverConfig.forEach(builder::setServerConfig);
        if (pgHba != null) {
            builder.setDataDirectoryCustomizer(dir -> {
                try {
                    Files.writeString(dir.toPath().resolve("pg_hba.conf"), pgHba);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        try {
            return new ExtraPostgres(builder.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return postgres.getPort();
    }

    /** A new database with every {@code schemas/sql} schema applied, as {@link TestPostgres} does. */
    public TestDatabase createDatabase(String name, String urlParams) {
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        String url = "jdbc:postgresql://localhost:" + port() + "/" + name + (urlParams.isEmpty() ? "" : "?" + urlParams);
        TestDatabase db = new TestDatabase(name, url, "postgres", null);
        db.runScript(ProjectFiles.schemaFile("outbox.sql"));
        Path mentions = ProjectFiles.schemaFile("mentions.sql");
        if (Files.exists(mentions)) {
            db.runScript(mentions);
        }
        return db;
    }

    /** Stops the server: afterwards every connection to {@link #port()} is refused. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Path tempDir(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
