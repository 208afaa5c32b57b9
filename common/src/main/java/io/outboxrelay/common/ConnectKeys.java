package io.outboxrelay.common;

import java.util.Locale;
import java.util.Map;

/**
 * What Kafka Connect's own connector keys, which both tasks read from their configuration, ask for. Values are
 * trimmed and compared without case, as Connect reads them.
 */
public final class ConnectKeys {
    public static final String ERRORS_TOLERANCE = "errors.tolerance";
    public static final String EXACTLY_ONCE_SUPPORT = "exactly.once.support";
    public static final String TRANSACTION_BOUNDARY = "transaction.boundary";

    private ConnectKeys() {
    }

    /** Whether {@code errors.tolerance=all}: a record a failure dropped is acknowledged like a filtered one. */
    public static boolean toleratesAllErrors(Map<String, ?> props) {
        return "all".equals(lower(props.get(ERRORS_TOLERANCE)));
    }

    /** Whether the connector asks Connect for exactly-once: required, or its own transaction boundaries. */
    public static boolean exactlyOnceAsked(Map<String, ?> props) {
        return "required".equals(lower(props.get(EXACTLY_ONCE_SUPPORT)))
            || "connector".equals(lower(props.get(TRANSACTION_BOUNDARY)));
    }

    private static String lower(Object value) {
        return value == null ? "" : value.toString().trim().toLowerCase(Locale.ROOT);
    }
}
