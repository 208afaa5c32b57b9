package io.outboxrelay.connector.integration;

/** Where the tests' shared PostgreSQL server is, whichever backend started it (see {@link TestPostgres}). */
public interface PostgresServer extends AutoCloseable {
    String jdbcUrl(String database);

    String user();

    /** Null when the server trusts local connections. */
    String password();

    @Override
    void close();
}
