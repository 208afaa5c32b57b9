package io.outboxrelay.testsupport;

import io.outboxrelay.postgres.LocalPostgres;

/**
 * A PostgreSQL server the tests make databases on: the shared one ({@link TestPostgres}), whichever
 * backend started it, or one a test started itself with {@link io.outboxrelay.postgres.PostgresBuilder}
 * ({@link #of}).
 */
public interface PostgresServer extends AutoCloseable {
    String jdbcUrl(String database);

    String user();

    /** Null when the server trusts local connections. */
    String password();

    @Override
    void close();

    /** The databases of a server started with {@link io.outboxrelay.postgres.PostgresBuilder}; closing it stops it. */
    static PostgresServer of(LocalPostgres server) {
        return new PostgresServer() {
            @Override
            public String jdbcUrl(String database) {
                return server.jdbcUrl(database);
            }

            @Override
            public String user() {
                return server.user();
            }

            @Override
            public String password() {
                return null;
            }

            @Override
            public void close() {
                server.close();
            }
        };
    }

    /** A new database with no schema file applied; {@code urlParams} (or "") go on its JDBC URL. */
    default TestDatabase createEmptyDatabase(String name, String urlParams) {
        new TestDatabase("postgres", jdbcUrl("postgres"), user(), password()).execute("CREATE DATABASE " + name);
        String url = jdbcUrl(name) + (urlParams.isEmpty() ? "" : "?" + urlParams);
        return new TestDatabase(name, url, user(), password());
    }

    /** A new database with the project's schema files applied: {@code schemas/sql/outbox.sql} and {@code mentions.sql}. */
    default TestDatabase createDatabase(String name, String urlParams) {
        TestDatabase db = createEmptyDatabase(name, urlParams);
        db.runScript(ProjectFiles.schemaFile("outbox.sql"));
        db.runScript(ProjectFiles.schemaFile("mentions.sql"));
        return db;
    }
}
