package io.outboxrelay.common;

import java.util.List;
import java.util.Locale;
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
        "sslpasswordcallback", "authenticationPluginClassName", "loggerFile", "loggerLevel");
    private static final Set<String> FORBIDDEN_LOWER = FORBIDDEN.stream()
        .map(p -> p.toLowerCase(Locale.ROOT)).collect(java.util.stream.Collectors.toUnmodifiableSet());

    private DriverPropertyGuard() {
    }

    static String describeForbidden() {
        return String.join(", ", FORBIDDEN);
    }

    /**
     * @throws ConfigException naming the key and the offending property when the URL is not a
     *     PostgreSQL JDBC URL or carries a forbidden driver property
     */
    public static void check(String key, String url) {
        if (!url.startsWith("jdbc:postgresql:")) {
            throw new ConfigException(key, redact(url),
                "must start with jdbc:postgresql: (for example jdbc:postgresql://localhost:5432/app)");
        }
        var parsed = Driver.parseURL(url, null);
        if (parsed == null) {
            throw new ConfigException(key, redact(url), "is not a URL the PostgreSQL driver can parse");
        }
        for (String name : parsed.stringPropertyNames()) {
            if (FORBIDDEN_LOWER.contains(name.toLowerCase(Locale.ROOT))) {
                throw new ConfigException(key, redact(url), "driver property '" + name
                    + "' is not allowed: it loads classes or writes files on the worker. Remove it; "
                    + "for TLS use sslmode=verify-full with sslrootcert=<path> instead of a custom factory");
            }
        }
        if (parsed.getProperty("password") != null) {
            throw new ConfigException(key, redact(url),
                "must not carry the password; set connection.password, which is masked");
        }
    }

    /** The URL with its query string removed, safe to show in an error or a log line. */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        int q = url.indexOf('?');
        return q < 0 ? url : url.substring(0, q) + "?…";
    }
}
