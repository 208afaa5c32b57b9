package io.outboxrelay.testsupport;

import io.outboxrelay.postgres.PostgresBuilder;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real PostgreSQL server (PostgreSQL 17) for the whole test JVM; each test class gets a database of
 * its own with the project's schema files applied. The server is zonky's embedded binaries, or with
 * {@code -Ptestcontainers} (system property {@value #BACKEND_PROPERTY}=testcontainers) a
 * {@code postgres:17} container started by {@code ContainerPostgres}, which only that profile compiles.
 *
 * <p>The embedded server runs the binaries on the classpath (zonky's PostgreSQL 17) unless
 * {@value #BINARIES_PROPERTY} names another zonky binaries jar: the connector module's {@code postgres-13}
 * failsafe execution re-runs the core ITs on PostgreSQL 13 that way. With {@value #MAJOR_PROPERTY} set, the
 * server must report that major version, or every test fails: a matrix run never passes on the wrong server.
 */
public final class TestPostgres {
    static final String BACKEND_PROPERTY = "outboxrelay.test.postgres";
    static final String BINARIES_PROPERTY = "outboxrelay.test.postgres.binaries";
    static final String MAJOR_PROPERTY = "outboxrelay.test.postgres.major";
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
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.close();
                } catch (RuntimeException ignored) {
                    // the JVM is exiting
                }
            }));
            try {
                checkMajorVersion(server);
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            instance = new TestPostgres(server);
        }
        return instance;
    }

    private static PostgresServer embeddedServer() {
        PostgresBuilder builder = new PostgresBuilder().maxConnections(300).setting("wal_level", "logical");
        String binaries = System.getProperty(BINARIES_PROPERTY, "");
        if (!binaries.isBlank()) {
            builder.binaries(Path.of(binaries));
        }
        return PostgresServer.of(builder.start());
    }

    /** Fails when {@value #MAJOR_PROPERTY} is set and the server is another major; logs the version either way. */
    private static void checkMajorVersion(PostgresServer server) {
        TestDatabase admin = new TestDatabase("postgres", server.jdbcUrl("postgres"), server.user(), server.password());
        long versionNum = admin.queryLong("SELECT current_setting('server_version_num')::int");
        System.out.println("TestPostgres: PostgreSQL " + admin.query("SHOW server_version").get(0).get(0));
        String expected = System.getProperty(MAJOR_PROPERTY, "");
        if (!expected.isBlank() && versionNum / 10_000 != Long.parseLong(expected)) {
            throw new IllegalStateException("the test server is PostgreSQL " + versionNum + ", but " + MAJOR_PROPERTY
                + "=" + expected);
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

    /** A new database named after the prefix, with the project's schema files applied. */
    public TestDatabase createDatabase(String prefix) {
        return server.createDatabase(uniqueName(prefix), "");
    }

    /** A new database named after the prefix, with no schema file applied. */
    public TestDatabase createEmptyDatabase(String prefix) {
        return server.createEmptyDatabase(uniqueName(prefix), "");
    }

    private static String uniqueName(String prefix) {
        return (prefix.replaceAll("[^a-z0-9_]", "_") + "_" + DATABASES.incrementAndGet()).toLowerCase(Locale.ROOT);
    }

    /** A file under the repository's {@code schemas/sql}. */
    public static Path schemaFile(String name) {
        return ProjectFiles.schemaFile(name);
    }
}
