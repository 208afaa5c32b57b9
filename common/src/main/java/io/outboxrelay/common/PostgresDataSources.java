package io.outboxrelay.common;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import javax.sql.DataSource;
import org.postgresql.Driver;

/**
 * Opens connector sessions: a small pool for claims and stamps, and plain connections for LISTEN,
 * which must stay on one session and so never goes through the pool.
 */
public final class PostgresDataSources {
    private static final NamedSql.Bindable SESSION_SETTINGS =
        NamedSql.load(PostgresDataSources.class, "session.sql").bindable("SessionSettings", "");

    private PostgresDataSources() {
    }

    /**
     * A pool that does not fail at construction when the database is down: the first use reports
     * the classified error instead, so a task can start, back off and recover.
     */
    public static HikariDataSource pool(ConnectionSettings settings, int maxSize, String poolName) {
        return pool(settings, maxSize, poolName, null);
    }

    /** The same, every session of which runs {@code initSql} (null: none) once when it opens. */
    public static HikariDataSource pool(ConnectionSettings settings, int maxSize, String poolName, String initSql) {
        HikariConfig cfg = new HikariConfig();
        cfg.setConnectionInitSql(initSql);
        // a data source of our own rather than jdbcUrl + dataSourceProperties: HikariConfig logs those
        // properties at DEBUG and masks only "password", not sslpassword; this one prints as the settings
        // do, without secrets. It also opens sessions with the bundled driver directly, which DriverManager
        // may not see under plugin.path isolation.
        cfg.setDataSource(new SessionDataSource(settings));
        cfg.setPoolName(poolName);
        cfg.setMaximumPoolSize(maxSize);
        cfg.setMinimumIdle(0);
        cfg.setInitializationFailTimeout(-1);
        cfg.setConnectionTimeout(10_000);
        cfg.setValidationTimeout(5_000);
        cfg.setAutoCommit(true);
        // Stated rather than detected: HikariCP (7.1.0) reads the default isolation once, from the pool's
        // first session, and when that session dies meanwhile (a terminated backend, a failover) it keeps
        // "unknown" and asks every later session to switch to isolation level -1, which the driver refuses:
        // the pool never opens another session. The claim and stamp statements are written for READ COMMITTED.
        cfg.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        cfg.setRegisterMbeans(false);
        return new HikariDataSource(cfg);
    }

    /** Opens plain sessions with the settings; what the pool draws from. */
    private static final class SessionDataSource implements DataSource {
        private final ConnectionSettings settings;
        private volatile int loginTimeoutSeconds;

        SessionDataSource(ConnectionSettings settings) {
            this.settings = settings;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return open(settings);
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            throw new SQLFeatureNotSupportedException("sessions use the connector's configured credentials");
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
            // the driver logs through java.util.logging; nothing to write here
        }

        @Override
        public void setLoginTimeout(int seconds) {
            loginTimeoutSeconds = seconds; // the driver's connectTimeout (in the settings) bounds a login
        }

        @Override
        public int getLoginTimeout() {
            return loginTimeoutSeconds;
        }

        @Override
        public java.util.logging.Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            if (type.isInstance(this)) {
                return type.cast(this);
            }
            throw new SQLException("not a wrapper for " + type.getName());
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return type.isInstance(this);
        }

        @Override
        public String toString() {
            return settings.toString();
        }
    }

    /**
     * A session with the settings: logged in, then given its server settings by one statement (session.sql),
     * so that they hold from its first use on, directly or through a pooler that refuses startup options.
     */
    public static Connection open(ConnectionSettings settings) throws SQLException {
        Connection c = new Driver().connect(settings.url(), settings.driverProperties());
        if (c == null) {
            throw new SQLException("not a PostgreSQL JDBC URL: " + DriverPropertyGuard.redact(settings.url()),
                SqlStates.UNABLE_TO_CONNECT);
        }
        try (PreparedStatement ps = c.prepareStatement(SESSION_SETTINGS.sql())) {
            SESSION_SETTINGS.set(ps, "statement_timeout", Long.toString(settings.statementTimeoutMs()));
            SESSION_SETTINGS.set(ps, "idle_in_transaction_timeout", Long.toString(settings.idleInTransactionTimeoutMs()));
            SESSION_SETTINGS.set(ps, "synchronous_commit", settings.synchronousCommit());
            ps.execute();
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        return c;
    }
}
