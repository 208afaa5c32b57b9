package io.outboxrelay.common;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigException;
import org.postgresql.Driver;

/**
 * Rejects JDBC URLs whose driver properties would let a connector config load arbitrary classes or
 * write files on the worker. A Connect REST API is often reachable by more people than the worker's
 * file system, so these properties are refused wherever they appear in the URL.
 */
public final class DriverPropertyGuard {
    static final List<String> FORBIDDEN = List.of(
        "socketFactory", "socketFactoryArg", "sslfactory", "sslfactoryarg", "sslhostnameverifier",
        "sslpasswordcallback", "authenticationPluginClassName", "connectExecutor", "connectExecutorArg",
        "xmlFactoryFactory", "loggerFile", "loggerLevel");
    private static final String PREFIX = "jdbc:postgresql:";
    private static final Set<String> FORBIDDEN_LOWER = FORBIDDEN.stream()
        .map(p -> p.toLowerCase(Locale.ROOT)).collect(java.util.stream.Collectors.toUnmodifiableSet());

    /** Driver properties that hold a secret, lower-cased, and the masked key that carries each instead. */
    static final Map<String, String> SECRET_PROPERTIES = Map.of(
        "password", ConnectionConfigKeys.PASSWORD,
        "sslpassword", ConnectionConfigKeys.SSL_PASSWORD);

    private DriverPropertyGuard() {
    }

    static String describeForbidden() {
        return String.join(", ", FORBIDDEN);
    }

    /**
     * {@code loggerLevel=OFF}, which Testcontainers' {@code getJdbcUrl()} adds to every PostgreSQL URL: it can only turn
     * the driver's logging off. Any other level stays refused: drivers that still honour it log at that level to the
     * worker's standard error.
     */
    private static boolean quietLogger(String name, String value) {
        return name.strip().equalsIgnoreCase("loggerLevel") && value != null && value.strip().equalsIgnoreCase("OFF");
    }

    /**
     * @throws ConfigException naming the key and the offending property when the URL is not a
     *     PostgreSQL JDBC URL or carries a forbidden driver property
     */
    public static void check(String key, String url) {
        if (!url.startsWith(PREFIX)) {
            throw new ConfigException(key, redact(url),
                "must start with jdbc:postgresql: (for example jdbc:postgresql://localhost:5432/app)");
        }
        if (userInfoEnd(withoutQuery(url)) >= 0) {
            // checked before the driver parses it: pgjdbc would log the part after ':' as a bad port
            throw new ConfigException(key, redact(url), "must not carry credentials before the host"
                + " (user:password@host); set connection.user and connection.password, which is masked");
        }
        var parsed = Driver.parseURL(url, null);
        if (parsed == null) {
            throw new ConfigException(key, redact(url), "is not a URL the PostgreSQL driver can parse");
        }
        for (String name : parsed.stringPropertyNames()) {
            if (quietLogger(name, parsed.getProperty(name))) {
                continue;
            }
            if (FORBIDDEN_LOWER.contains(name.strip().toLowerCase(Locale.ROOT))) {
                throw new ConfigException(key, redact(url), "driver property '" + name
                    + "' is not allowed: it loads classes or writes files on the worker. Remove it; "
                    + "for TLS use sslmode=verify-full with sslrootcert=<path> instead of a custom factory");
            }
        }
        for (String name : parsed.stringPropertyNames()) {
            String secretKey = SECRET_PROPERTIES.get(name.strip().toLowerCase(Locale.ROOT));
            if (secretKey != null) {
                throw new ConfigException(key, redact(url), "must not carry the driver property '" + name.strip()
                    + "': a URL is shown as stored by Connect's REST API; set " + secretKey + ", which is masked");
            }
        }
    }

    /**
     * The URL with its query string and any {@code user:password@} part removed, safe to show in an
     * error or a log line.
     */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        String base = withoutQuery(url);
        boolean hadQuery = base.length() < url.length();
        int at = userInfoEnd(base);
        if (at >= 0) {
            int start = base.indexOf("//") + 2;
            base = base.substring(0, start) + "…" + base.substring(at);
        }
        return hadQuery ? base + "?…" : base;
    }

    private static String withoutQuery(String url) {
        int q = url.indexOf('?');
        return q < 0 ? url : url.substring(0, q);
    }

    /** In a URL without its query: index of the '@' ending a {@code //user:password@} part, or -1. */
    private static int userInfoEnd(String base) {
        int start = base.indexOf("//");
        if (start < 0) {
            return -1;
        }
        int slash = base.indexOf('/', start + 2);
        int at = base.lastIndexOf('@', slash < 0 ? base.length() - 1 : slash - 1);
        return at > start ? at : -1;
    }
}
