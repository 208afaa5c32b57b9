package io.outboxrelay.testsupport;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A PostgreSQL server of a test class's own (zonky's embedded binaries), for settings the shared
 * {@link TestPostgres} server must not get (TLS, password authentication, a server the test stops).
 * Close it in {@code @AfterAll}.
 */
public final class ExtraPostgres implements PostgresServer {
    /** zonky waits 10 s by default; initdb plus the first start can take longer on a loaded CI machine. */
    private static final Duration STARTUP_WAIT = Duration.ofSeconds(90);

    private final EmbeddedPostgres postgres;
    private final Path socketDir;
    private boolean closed;

    private ExtraPostgres(EmbeddedPostgres postgres, Path socketDir) {
        this.postgres = postgres;
        this.socketDir = socketDir;
    }

    /** A server with the tests' defaults: {@code fsync} off, 50 connections. */
    public static ExtraPostgres start() {
        return start(builder -> { });
    }

    /**
     * @param serverConfig extra {@code postgresql.conf} settings
     * @param pgHba the content of {@code pg_hba.conf}, or null to keep zonky's (trust for everyone)
     */
    public static ExtraPostgres start(Map<String, String> serverConfig, String pgHba) {
        return start(builder -> {
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
        });
    }

    /** A server with the tests' defaults ({@code fsync} off, 50 connections) and what {@code customizer} sets. */
    public static ExtraPostgres start(Consumer<EmbeddedPostgres.Builder> customizer) {
        Path socketDir = tempDir("outbox-relay-test-pg");
        socketDir.toFile().deleteOnExit(); // servers left to zonky's shutdown hook are stopped before this runs
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
            .setServerConfig("fsync", "off")
            // not /tmp: a lock file a server of another user left there for this port would stop this one
            .setServerConfig("unix_socket_directories", socketDir.toString())
            .setServerConfig("max_connections", "50")
            .setPGStartupWait(STARTUP_WAIT);
        customizer.accept(builder);
        try {
            return new ExtraPostgres(builder.start(), socketDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return postgres.getPort();
    }

    @Override
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://localhost:" + port() + "/" + database;
    }

    @Override
    public String user() {
        return "postgres";
    }

    @Override
    public String password() {
        return null;
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
            Files.deleteIfExists(socketDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Path tempDir(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
