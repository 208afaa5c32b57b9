package io.outboxrelay.testsupport;

/**
 * A PostgreSQL server the tests make databases on: the shared one ({@link TestPostgres}), whichever
 * backend started it, or one of a test's own ({@link ExtraPostgres}).
 */
public interface PostgresServer extends AutoCloseable {
    String jdbcUrl(String database);

    String user();

    /** Null when the server trusts local connections. */
    String password();

    @Override
    void close();

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
