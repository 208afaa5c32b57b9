package io.outboxrelay.writer;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Properties;
import org.postgresql.Driver;

/**
 * Where {@link FanoutReceipts} gets its connections: one long-lived listening session, and
 * short-lived ones for the fallback read. Any connection factory fits, e.g. {@code
 * dataSource::getConnection} for the fallback; the listening session should not come from a pool
 * (it is held for the receipts' lifetime) nor through PgBouncer in transaction mode (LISTEN needs a
 * session of its own).
 */
@FunctionalInterface
public interface ConnectionSource {
    /** Opens (or borrows) a connection; the caller closes it. */
    Connection open() throws SQLException;

    /**
     * Connections opened by the PostgreSQL driver directly (not through {@code DriverManager}, so no
     * other registered driver is ever asked). The properties are copied; {@code ApplicationName}
     * ({@code outbox-writer}) and {@code tcpKeepAlive} ({@code true}, so a dead listening session is
     * eventually noticed) are added when absent.
     *
     * @param jdbcUrl    a {@code jdbc:postgresql://} URL
     * @param properties driver properties such as {@code user} and {@code password}; may be null
     */
    static ConnectionSource of(String jdbcUrl, Properties properties) {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        if (!jdbcUrl.startsWith("jdbc:postgresql:")) {
            // the URL is not echoed back: it may carry a password
            throw new IllegalArgumentException("the JDBC URL must start with jdbc:postgresql:");
        }
        Properties copy = new Properties();
        if (properties != null) {
            for (String key : properties.stringPropertyNames()) {
                copy.setProperty(key, properties.getProperty(key));
            }
        }
        copy.putIfAbsent("ApplicationName", "outbox-writer");
        copy.putIfAbsent("tcpKeepAlive", "true");
        Driver driver = new Driver();
        return () -> {
            Connection c = driver.connect(jdbcUrl, copy);
            if (c == null) {
                throw new SQLException("the PostgreSQL driver did not accept the JDBC URL");
            }
            return c;
        };
    }
}
