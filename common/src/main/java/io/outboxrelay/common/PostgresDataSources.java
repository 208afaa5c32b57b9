package io.outboxrelay.common;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.Driver;

/**
 * Opens connector sessions: a small pool for claims and stamps, and plain connections for LISTEN,
 * which must stay on one session and so never goes through the pool.
 */
public final class PostgresDataSources {
    private PostgresDataSources() {
    }

    /**
     * A pool that does not fail at construction when the database is down: the first use reports
     * the classified error instead, so a task can start, back off and recover.
     */
    public static HikariDataSource pool(ConnectionSettings settings, int maxSize, String poolName) {
        HikariConfig cfg = new HikariConfig();
        cfg.setJdbcUrl(settings.url());
        // named explicitly: under plugin.path isolation DriverManager may not see the bundled driver
        cfg.setDriverClassName(Driver.class.getName());
        cfg.setDataSourceProperties(settings.driverProperties());
        cfg.setPoolName(poolName);
        cfg.setMaximumPoolSize(maxSize);
        cfg.setMinimumIdle(0);
        cfg.setInitializationFailTimeout(-1);
        cfg.setConnectionTimeout(10_000);
        cfg.setValidationTimeout(5_000);
        cfg.setAutoCommit(true);
        cfg.setRegisterMbeans(false);
        return new HikariDataSource(cfg);
    }

    public static Connection open(ConnectionSettings settings) throws SQLException {
        Connection c = new Driver().connect(settings.url(), settings.driverProperties());
        if (c == null) {
            throw new SQLException("not a PostgreSQL JDBC URL: " + DriverPropertyGuard.redact(settings.url()), "08001");
        }
        return c;
    }
}
