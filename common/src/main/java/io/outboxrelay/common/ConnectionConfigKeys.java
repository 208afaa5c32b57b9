package io.outboxrelay.common;

import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.types.Password;

/**
 * The {@code connection.*} keys shared by the relay and the mention-recovery task, so both read the
 * database the same way and the connector declares each key once.
 */
public final class ConnectionConfigKeys {
    public static final String GROUP = "Connection";

    public static final String URL = "connection.url";
    public static final String USER = "connection.user";
    public static final String PASSWORD = "connection.password";
    public static final String SSL_PASSWORD = "connection.ssl.password";
    public static final String STATEMENT_TIMEOUT_MS = "connection.statement.timeout.ms";
    public static final String SOCKET_TIMEOUT_MS = "connection.socket.timeout.ms";
    public static final String IDLE_IN_TX_TIMEOUT_MS = "connection.idle.in.transaction.timeout.ms";
    public static final String STARTUP_RETRY_MS = "connection.startup.retry.ms";
    public static final String SYNCHRONOUS_COMMIT = "connection.synchronous.commit";
    public static final String DEFAULT_SYNCHRONOUS_COMMIT = "off";

    private ConnectionConfigKeys() {
    }

    public static ConfigDef addTo(ConfigDef def) {
        int order = 0;
        return def
            .define(URL, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new JdbcUrlValidator(), Importance.HIGH,
                "JDBC URL of the PostgreSQL database, e.g. jdbc:postgresql://db:5432/app?sslmode=verify-full. "
                    + "Driver properties that load classes or write files (" + DriverPropertyGuard.describeForbidden()
                    + "; loggerLevel=OFF alone is accepted) are rejected, and so is a password or sslpassword in the URL: set connection.password and"
                    + " connection.ssl.password, which are masked. So is any '@' after // (user:password@host; write"
                    + " one in a database name or a query value as %40). TLS: ?sslmode=verify-full&sslrootcert=/path/root.crt.",
                GROUP, ++order, Width.LONG, "JDBC URL")
            .define(USER, Type.STRING, null, Importance.HIGH,
                "Database role the connector logs in as. It needs SELECT and UPDATE on the outbox table "
                    + "(see schemas/sql/outbox.sql for the grants).",
                GROUP, ++order, Width.MEDIUM, "User")
            .define(PASSWORD, Type.PASSWORD, null, Importance.HIGH,
                "Password of connection.user. Shown as [hidden] in validation results and never logged."
                    + " Connect's GET /connectors/<name>/config and /tasks return configs as stored, so pass it"
                    + " through a ConfigProvider, e.g. ${file:/etc/kafka/secrets/db.properties:password}.",
                GROUP, ++order, Width.MEDIUM, "Password")
            .define(SSL_PASSWORD, Type.PASSWORD, null, Importance.LOW,
                "Password of the encrypted client key named by sslkey in connection.url (the driver's sslpassword,"
                    + " which the URL must not carry). Masked like connection.password; pass it through a"
                    + " ConfigProvider too.",
                GROUP, ++order, Width.MEDIUM, "Client key password")
            .define(STATEMENT_TIMEOUT_MS, Type.LONG, 30_000L, ConfigDef.Range.atLeast(0), Importance.LOW,
                "statement_timeout set on every connector session; 0 disables it.",
                GROUP, ++order, Width.SHORT, "Statement timeout (ms)")
            .define(SOCKET_TIMEOUT_MS, Type.LONG, 60_000L, ConfigDef.Range.atLeast(0), Importance.LOW,
                "Socket read timeout of the JDBC driver, so a dead server cannot hang a task; 0 disables it.",
                GROUP, ++order, Width.SHORT, "Socket timeout (ms)")
            .define(IDLE_IN_TX_TIMEOUT_MS, Type.LONG, 60_000L, ConfigDef.Range.atLeast(0), Importance.LOW,
                "idle_in_transaction_session_timeout set on every connector session; 0 disables it.",
                GROUP, ++order, Width.SHORT, "Idle-in-transaction timeout (ms)")
            .define(STARTUP_RETRY_MS, Type.LONG, 120_000L, ConfigDef.Range.atLeast(0), Importance.LOW,
                "How long a starting relay task retries a database it has not reached yet before it fails, so a"
                    + " wrong host or a down server shows in the task's REST status. Once the task has worked,"
                    + " outages are retried with backoff for as long as they last.",
                GROUP, ++order, Width.SHORT, "Startup retry (ms)")
            .define(SYNCHRONOUS_COMMIT, Type.STRING, DEFAULT_SYNCHRONOUS_COMMIT,
                ConfigDef.ValidString.in("off", "local", "remote_write", "on", "remote_apply"), Importance.LOW,
                "synchronous_commit of the connector's own sessions only (claims, stamps, leases, mention marks;"
                    + " never the application's writes). With off, the connector's commits do not wait for the WAL"
                    + " flush: a database crash can undo its last few hundred milliseconds of leases and stamps, and"
                    + " those rows are then delivered again (a duplicate, never a loss, as after any redelivery)."
                    + " It measured ~15% more claim+stamp throughput and a shorter latency tail. Set on to avoid"
                    + " those duplicates after a database crash. Left unset on a connector that asks for exactly-once"
                    + " (exactly.once.support=required, or transaction.boundary=connector) it is on: there such a"
                    + " duplicate reaches read_committed consumers, since the connector's Kafka offsets stop naming a"
                    + " row once its stamp committed.",
                GROUP, ++order, Width.SHORT, "Synchronous commit");
    }

    /** Reads the keys above from any config that was built with {@link #addTo}. */
    public static ConnectionSettings settings(AbstractConfig config, String applicationName) {
        Password password = config.getPassword(PASSWORD);
        Password sslPassword = config.getPassword(SSL_PASSWORD);
        return new ConnectionSettings(
            config.getString(URL),
            config.getString(USER),
            password == null ? null : password.value(),
            sslPassword == null ? null : sslPassword.value(),
            config.getLong(STATEMENT_TIMEOUT_MS),
            config.getLong(SOCKET_TIMEOUT_MS),
            config.getLong(IDLE_IN_TX_TIMEOUT_MS),
            synchronousCommit(config.originals()),
            applicationName);
    }

    /**
     * The connector's {@code synchronous_commit}: {@value #SYNCHRONOUS_COMMIT} as set, else on where the connector asks
     * for exactly-once ({@link ConnectKeys#exactlyOnceAsked}), else {@value #DEFAULT_SYNCHRONOUS_COMMIT}.
     */
    public static String synchronousCommit(Map<String, ?> props) {
        Object set = props.get(SYNCHRONOUS_COMMIT);
        if (set != null) {
            return set.toString().strip();
        }
        return ConnectKeys.exactlyOnceAsked(props) ? "on" : DEFAULT_SYNCHRONOUS_COMMIT;
    }

    /** Checks the URL shape and the forbidden driver properties at config time. */
    static final class JdbcUrlValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            if (value == null) {
                return; // NO_DEFAULT_VALUE reports the missing key itself
            }
            DriverPropertyGuard.check(name, (String) value);
        }

        @Override
        public String toString() {
            return "jdbc:postgresql://host[:port]/database[?properties]";
        }
    }
}
