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
        // both checked before the driver parses the URL: pgjdbc logs a URL it cannot parse, or its bad port, whole
        if (userInfoEnd(url) >= 0) {
            throw new ConfigException(key, redact(url), "must not carry credentials before the host"
                + " (user:password@host); set connection.user and connection.password, which is masked (an '@'"
                + " anywhere but in a query value counts; write one in a database name as %40)");
        }
        if (badPort(url)) {
            throw new ConfigException(key, redact(url), "has a port that is not a number");
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
        String shown = url;
        int at = userInfoEnd(url);
        if (at >= 0) {
            shown = url.substring(0, url.indexOf("//") + 2) + "…" + url.substring(at);
        } else if (badPort(url)) {
            shown = url.substring(0, url.indexOf("//") + 2) + "…" + url.substring(authorityEnd(url));
        }
        String base = withoutQuery(shown);
        return base.length() < shown.length() ? base + "?…" : base;
    }

    private static String withoutQuery(String url) {
        int q = url.indexOf('?');
        return q < 0 ? url : url.substring(0, q);
    }

    /**
     * Index of the '@' ending a {@code //user:password@} part, or -1: the last '@' that is not in a query value
     * ({@code ?ApplicationName=me@host}). Not the first '@' before the first '/' or '?': a password may hold either.
     */
    private static int userInfoEnd(String url) {
        int start = url.indexOf("//");
        for (int at = url.lastIndexOf('@'); start >= 0 && at > start + 1; at = url.lastIndexOf('@', at - 1)) {
            int query = url.indexOf('?', start + 2);
            int pair = Math.max(query, url.lastIndexOf('&', at));
            boolean inValue = query >= 0 && query < at && url.indexOf('=', pair) >= 0 && url.indexOf('=', pair) < at;
            if (!inValue) {
                return at;
            }
        }
        return -1;
    }

    /** Where the hosts after {@code //} end: the first '/' or '?' after them, or the URL's end. */
    private static int authorityEnd(String url) {
        int start = url.indexOf("//") + 2;
        int end = url.length();
        for (char c : new char[] {'/', '?'}) {
            int i = url.indexOf(c, start);
            end = i >= 0 ? Math.min(end, i) : end;
        }
        return end;
    }

    /** Whether a host after {@code //} has a port that is not digits (the driver would log it). */
    private static boolean badPort(String url) {
        int start = url.indexOf("//");
        if (start < 0) {
            return false;
        }
        for (String host : url.substring(start + 2, authorityEnd(url)).split(",", -1)) {
            int colon = host.lastIndexOf(':');
            String port = colon > host.lastIndexOf(']') ? host.substring(colon + 1) : "";
            if (!port.chars().allMatch(c -> c >= '0' && c <= '9')) {
                return true;
            }
        }
        return false;
    }
}
