package io.outboxrelay.connector.integration;

import io.outboxrelay.testsupport.PostgresServer;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The tests' shared PostgreSQL as a {@code postgres:17} container (-Ptestcontainers), with the settings
 * the embedded server runs with. Override the image with {@code -Doutboxrelay.test.postgres.image=...}.
 */
public final class ContainerPostgres implements PostgresServer {
    private final PostgreSQLContainer container;

    public ContainerPostgres() {
        TestcontainersPreflight.requireDocker();
        String image = System.getProperty("outboxrelay.test.postgres.image", "postgres:17");
        container = new PostgreSQLContainer(DockerImageName.parse(image).asCompatibleSubstituteFor("postgres"))
            .withUsername("postgres")
            .withPassword("postgres")
            .withCommand("postgres", "-c", "max_connections=300", "-c", "wal_level=logical", "-c", "fsync=off");
        container.start();
    }

    @Override
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + container.getHost() + ":" + container.getMappedPort(5432) + "/" + database;
    }

    @Override
    public String user() {
        return container.getUsername();
    }

    @Override
    public String password() {
        return container.getPassword();
    }

    @Override
    public void close() {
        container.stop();
    }

    /** Fails at once, and says why, on a machine without a Docker engine. */
    public static final class TestcontainersPreflight {
        private TestcontainersPreflight() {
        }

        public static void requireDocker() {
            if (!DockerClientFactory.instance().isDockerAvailable()) {
                throw new IllegalStateException("-Ptestcontainers needs a running Docker engine (none was found:"
                    + " see Testcontainers' log above for what it tried). Without Docker, run ./mvnw verify: the"
                    + " default suite starts PostgreSQL, Kafka and Connect without containers.");
            }
        }
    }
}
