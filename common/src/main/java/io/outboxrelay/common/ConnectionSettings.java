package io.outboxrelay.common;

import java.util.Properties;

/**
 * Everything needed to open a connector session. {@link #toString()} shows neither password nor the
 * URL's driver properties.
 */
public record ConnectionSettings(
    String url,
    String user,
    String password,
    String sslPassword,
    long statementTimeoutMs,
    long socketTimeoutMs,
    long idleInTransactionTimeoutMs,
    String synchronousCommit,
    String applicationName) {

    /**
     * Driver properties for a session: credentials, socket timeout, application name. The server settings
     * (statement and idle-in-transaction timeouts, synchronous_commit) are not among them: PgBouncer refuses a
     * login that carries them as startup {@code options}, so {@link PostgresDataSources#open} sets them with a
     * statement before the session is used.
     */
    public Properties driverProperties() {
        Properties props = new Properties();
        if (user != null) {
            props.setProperty("user", user);
        }
        if (password != null) {
            props.setProperty("password", password);
        }
        if (sslPassword != null) {
            props.setProperty("sslpassword", sslPassword);
        }
        props.setProperty("ApplicationName", applicationName);
        // the schema needs PostgreSQL 13 (gen_random_uuid); saying so lets the driver send the application
        // name at login, so a session is named in pg_stat_activity from its first moment and no SET follows
        props.setProperty("assumeMinServerVersion", "13");
        props.setProperty("connectTimeout", "10");
        props.setProperty("socketTimeout", Long.toString(Math.max(0, socketTimeoutMs / 1000)));
        props.setProperty("tcpKeepAlive", "true");
        return props;
    }

    @Override
    public String toString() {
        return "ConnectionSettings[url=" + DriverPropertyGuard.redact(url) + ", user=" + user + ", password="
            + (password == null ? "null" : "[hidden]") + ", sslPassword=" + (sslPassword == null ? "null" : "[hidden]")
            + ", application=" + applicationName + "]";
    }
}
