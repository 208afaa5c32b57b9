package io.outboxrelay.quickstart;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A connector config file in the REST API's shape (the JSON object {@code PUT /connectors/<name>/config}
 * takes), with {@code ${VARIABLE}} placeholders filled in. Placeholders with a colon
 * ({@code ${file:/path:key}}, {@code ${env:NAME}}) are Connect config-provider references: they are
 * left for the worker to resolve.
 */
final class ConnectorTemplate {
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");
    private static final ObjectMapper JSON = new ObjectMapper();

    private ConnectorTemplate() {
    }

    static Map<String, String> load(Path file, Map<String, String> variables) {
        Map<String, Object> raw;
        try {
            raw = JSON.readValue(Files.readString(file), new TypeReference<LinkedHashMap<String, Object>>() { });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read connector config " + file + ": " + e.getMessage(), e);
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : raw.entrySet()) {
            Object v = e.getValue();
            if (v != null && !(v instanceof String)) {
                throw new IllegalArgumentException(file + ": \"" + e.getKey() + "\" must be a JSON string (Connect"
                    + " config values are strings), got " + v);
            }
            out.put(e.getKey(), v == null ? null : substitute((String) v, variables, file, e.getKey()));
        }
        return out;
    }

    static String substitute(String value, Map<String, String> variables, Path file, String key) {
        Matcher m = VARIABLE.matcher(value);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String replacement = variables.get(m.group(1));
            if (replacement == null) {
                throw new IllegalArgumentException(file + ": \"" + key + "\" uses ${" + m.group(1)
                    + "}, which the quickstart does not know; it fills in " + variables.keySet());
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        return sb.toString();
    }
}
