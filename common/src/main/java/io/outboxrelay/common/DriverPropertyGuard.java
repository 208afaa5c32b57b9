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
        String refused = refusedBeforeParsing(url);
        if (refused != null) {
            throw new ConfigException(key, redact(url), refused);
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
        // a password in the query was refused before parsing; one the driver took from the worker's .pgpass or
        // pg_service.conf is in parsed, and is no reason to refuse the URL
    }

    /**
     * What is wrong with the URL's shape, checked before the driver parses it: pgjdbc logs a URL it cannot parse
     * whole, and a bad port, at WARNING, so nothing that may hold a secret reaches it. Credentials before the host are
     * refused wherever their '@' falls (a password may hold '/', '?' or '='): any '@' after {@code //} is, and one
     * meant for a database name or a query value is written {@code %40}, which the driver decodes. A password in the
     * query, a URL without its database ({@code //host:5432?…}), with a '/' more in it, or with a port that is not a
     * number are refused too. Null when the driver may parse it.
     */
    private static String refusedBeforeParsing(String url) {
        int start = url.indexOf("//");
        int query = url.indexOf('?');
        if (query >= 0) {
            for (String pair : url.substring(query + 1).split("&", -1)) {
                int eq = pair.indexOf('=');
                String secretKey = SECRET_PROPERTIES.get((eq < 0 ? pair : pair.substring(0, eq)).strip()
                    .toLowerCase(Locale.ROOT));
                if (secretKey != null) {
                    return "must not carry the driver property '" + pair.substring(0, eq < 0 ? pair.length() : eq)
                        .strip() + "': a URL is shown as stored by Connect's REST API; set " + secretKey
                        + ", which is masked";
                }
            }
        }
        if (start >= 0 && url.indexOf('@', start + 2) >= 0) {
            return "must not carry credentials before the host (user:password@host): set connection.user and"
                + " connection.password, which is masked (an '@' anywhere after // counts: write one in a database"
                + " name or a query value as %40)";
        }
        if (start < 0) {
            return null; // jdbc:postgresql:database
        }
        int slash = url.indexOf('/', start + 2);
        if (slash < 0 || query >= 0 && query < slash) {
            return "must name the database after the hosts (jdbc:postgresql://host:5432/app)";
        }
        if (url.substring(slash + 1, query < 0 ? url.length() : query).indexOf('/') >= 0) {
            return "has a '/' more than the one before the database (jdbc:postgresql://host:5432/app)";
        }
        return badPort(url) ? "has a port that is not a number" : null;
    }

    /**
     * The URL with its query string and anything between {@code //} and an '@' (credentials) removed, and the hosts
     * too when a port is not a number: safe to show in an error or a log line.
     */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        String shown = url;
        int start = url.indexOf("//");
        if (start >= 0 && url.indexOf('@', start + 2) >= 0) {
            return url.substring(0, start + 2) + "…"; // a password may hold '@', '/' and '?': nothing after // is safe
        } else if (badPort(url)) {
            shown = url.substring(0, start + 2) + "…" + url.substring(hostsEnd(url));
        }
        String base = withoutQuery(shown);
        return base.length() < shown.length() ? base + "?…" : base;
    }

    private static String withoutQuery(String url) {
        int q = url.indexOf('?');
        return q < 0 ? url : url.substring(0, q);
    }

    /** Where the hosts after {@code //} end: the first '/' or '?' after them, or the URL's end. */
    private static int hostsEnd(String url) {
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
        for (String host : url.substring(start + 2, hostsEnd(url)).split(",", -1)) {
            int colon = host.lastIndexOf(':');
            String port = colon > host.lastIndexOf(']') ? host.substring(colon + 1) : "";
            if (!port.chars().allMatch(c -> c >= '0' && c <= '9')) {
                return true;
            }
        }
        return false;
    }
}
