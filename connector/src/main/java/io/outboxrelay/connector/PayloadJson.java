package io.outboxrelay.connector;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The payload as the schemaless Connect value {@code value.format=payload.json} emits: objects become
 * {@code Map<String, Object>} (keys in the payload's order), arrays {@code List}, strings {@code String},
 * booleans {@code Boolean}, null {@code null}. An integer that fits a long becomes a {@code Long}, every
 * other number a {@code Double}: JsonConverter writes no other number schemaless.
 */
final class PayloadJson {
    /** Text after the value fails (a text or varchar payload column holds any text), rather than being dropped. */
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS); // to see a number a double cannot hold

    private PayloadJson() {
    }

    /** What {@link #problem} says of the JSON null: its record would have a null value, a tombstone. */
    static final String NULL = "the payload is JSON null";

    /**
     * Why {@link #parse} would fail on this payload (PostgreSQL's jsonb accepts nesting and number lengths
     * beyond Jackson's limits), {@link #NULL} when it would make a null value, or null. Checked before a row
     * is produced, so such a row is poisoned instead of failing the task or deleting a key.
     */
    static String problem(String json) {
        try {
            return parse(json) == null ? NULL : null;
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() instanceof JsonProcessingException j ? j : e;
            String message = cause instanceof JsonProcessingException j ? j.getOriginalMessage() : cause.getMessage();
            return message == null ? cause.getClass().getSimpleName() : message;
        }
    }

    static Object parse(String json) {
        try {
            return value(MAPPER.readTree(json));
        } catch (JsonProcessingException e) {
            // jsonb is always valid JSON; a text or varchar payload column need not be
            throw new IllegalStateException("payload is not valid JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static Object value(JsonNode node) {
        switch (node.getNodeType()) {
            case OBJECT -> {
                Map<String, Object> map = new LinkedHashMap<>();
                for (Map.Entry<String, JsonNode> e : node.properties()) {
                    map.put(e.getKey(), value(e.getValue()));
                }
                return map;
            }
            case ARRAY -> {
                List<Object> list = new ArrayList<>(node.size());
                for (JsonNode element : node) {
                    list.add(value(element));
                }
                return list;
            }
            case STRING -> {
                return node.textValue();
            }
            case BOOLEAN -> {
                return node.booleanValue();
            }
            case NUMBER -> {
                if (node.isIntegralNumber() && node.canConvertToLong()) {
                    return node.longValue();
                }
                double d = node.doubleValue();
                if (!Double.isFinite(d) || d == 0 && node.decimalValue().signum() != 0) {
                    // jsonb keeps 1e309 and 1e-400 exactly; as doubles they would go out as "Infinity" and 0.0
                    throw new IllegalStateException("the payload has a number beyond a double's range");
                }
                return d;
            }
            case MISSING -> {
                throw new IllegalStateException("the payload is empty, not JSON");
            }
            default -> {
                return null;
            }
        }
    }
}
