package io.outboxrelay.connector.integration;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real PostgreSQL server (PostgreSQL 17) for the whole test JVM; each test class gets a database of
 * its own with the project's schema files applied. The server is zonky's embedded binaries, or with
 * {@code -Ptestcontainers} (system property {@value #BACKEND_PROPERTY}=testcontainers) a
 * {@code postgres:17} container started by {@code ContainerPostgres}, which only that profile compiles.
 */
public final class TestPostgres {
    static final String BACKEND_PROPERTY = "outboxrelay.test.postgres";
    private static final String CONTAINER_BACKEND = "io.outboxrelay.connector.integration.ContainerPostgres";
    private static TestPostgres instance;
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private final PostgresServer server;

    private TestPostgres(PostgresServer server) {
        this.server = server;
    }

    public static synchronized TestPostgres get() {
        if (instance == null) {
            PostgresServer server = "testcontainers".equals(System.getProperty(BACKEND_PROPERTY))
                ? containerServer() : embeddedServer();
            instance = new TestPostgres(server);
            Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        }
        return instance;
    }

    private static PostgresServer embeddedServer() {
        try {
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setServerConfig("max_connections", "300")
                .setServerConfig("wal_level", "logical")
                .setServerConfig("fsync", "off")
                .start();
            return new PostgresServer() {
                @Override
                public String jdbcUrl(String database) {
                    return "jdbc:postgresql://localhost:" + pg.getPort() + "/" + database;
                }

                @Override
                public String user() {
                    return "postgres";
                }

                @Override
                public String password() {
                    return null;
                }

                @Override
                public void close() {
                    try {
                        pg.close();
                    } catch (IOException ignored) {
                        // the JVM is exiting
                    }
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static PostgresServer containerServer() {
        try {
            return (PostgresServer) Class.forName(CONTAINER_BACKEND).getDeclaredConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(BACKEND_PROPERTY + "=testcontainers needs the test sources of the"
                + " testcontainers profile: run ./mvnw -Ptestcontainers verify", e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("could not start the PostgreSQL container: " + e.getCause(), e);
        }
    }

    /** A JDBC URL of a database on the shared server, whether it exists or not. */
    public String jdbcUrl(String database) {
        return server.jdbcUrl(database);
    }

    /** A new database named after the prefix, with every {@code schemas/sql/*.sql} file applied. */
    public TestDatabase createDatabase(String prefix) {
        TestDatabase db = createEmptyDatabase(prefix);
        db.runScript(schemaFile("outbox.sql"));
        Path mentions = schemaFile("mentions.sql");
        if (Files.exists(mentions)) {
            db.runScript(mentions);
        }
        return db;
    }

    /** A new database named after the prefix, with no schema file applied. */
    public TestDatabase createEmptyDatabase(String prefix) {
        String name = (prefix.replaceAll("[^a-z0-9_]", "_") + "_" + DATABASES.incrementAndGet()).toLowerCase();
        TestDatabase admin = new TestDatabase("postgres", server.jdbcUrl("postgres"), server.user(),
            server.password());
        admin.execute("CREATE DATABASE " + name);
        return new TestDatabase(name, server.jdbcUrl(name), server.user(), server.password());
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
