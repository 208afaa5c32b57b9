package io.outboxrelay.connector.integration;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real PostgreSQL server (zonky embedded binaries, PostgreSQL 17) for the whole test JVM; each test
 * class gets a database of its own with the project's schema files applied.
 */
public final class TestPostgres {
    private static TestPostgres instance;
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private final EmbeddedPostgres postgres;

    private TestPostgres(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    public static synchronized TestPostgres get() {
        if (instance == null) {
            try {
                EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setServerConfig("max_connections", "300")
                    .setServerConfig("wal_level", "logical")
                    .setServerConfig("fsync", "off")
                    .start();
                instance = new TestPostgres(pg);
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        pg.close();
                    } catch (IOException ignored) {
                        // the JVM is exiting
                    }
                }));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return instance;
    }

    public int port() {
        return postgres.getPort();
    }

    /** A new database named after the prefix, with every {@code schemas/sql/*.sql} file applied. */
    public TestDatabase createDatabase(String prefix) {
        String name = (prefix.replaceAll("[^a-z0-9_]", "_") + "_" + DATABASES.incrementAndGet()).toLowerCase();
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        TestDatabase db = new TestDatabase(name, "jdbc:postgresql://localhost:" + port() + "/" + name, "postgres",
            null);
        db.runScript(schemaFile("outbox.sql"));
        Path mentions = schemaFile("mentions.sql");
        if (Files.exists(mentions)) {
            db.runScript(mentions);
        }
        return db;
    }

    /** A file under the repository's {@code schemas/sql}. */
    public static Path schemaFile(String name) {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            Path candidate = p.resolve("schemas").resolve("sql").resolve(name);
            if (Files.isDirectory(p.resolve("schemas").resolve("sql"))) {
                return candidate;
            }
        }
        throw new IllegalStateException("schemas/sql not found above " + here);
    }
}
