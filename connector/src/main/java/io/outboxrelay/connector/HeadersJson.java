package io.outboxrelay.connector;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.outboxrelay.common.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads the {@code headers} column as PostgreSQL prints a jsonb value, with Jackson's streaming parser
 * (splitting the object in SQL cost the claim more than scanning the text here). String values become
 * their text; any other value (number, boolean, null, object, array) its JSON text as printed. Entries
 * come sorted by key.
 */
final class HeadersJson {
    private static final String NOT_JSON = "text that is not valid JSON";

    /** The JSON type of the column ({@code null} when SQL NULL) and, for an object, its entries. */
    record Parsed(String type, String[] keys, String[] values) {
        static final Parsed NONE = new Parsed(null, null, null);
    }

    private HeadersJson() {
    }

    static Parsed parse(String text) {
        if (text == null) {
            return Parsed.NONE;
        }
        try (JsonParser p = Json.FACTORY.createParser(text)) {
            JsonToken first = p.nextToken();
            return first == JsonToken.START_OBJECT ? object(p, text) : new Parsed(type(first), null, null);
        } catch (IOException e) {
            return new Parsed(NOT_JSON, null, null);
        }
    }

    private static Parsed object(JsonParser p, String text) throws IOException {
        List<String[]> entries = new ArrayList<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken value = p.nextToken();
            entries.add(new String[] {key, value == JsonToken.VALUE_STRING ? p.getText() : jsonText(p, value, text)});
        }
        entries.sort(Comparator.comparing(e -> e[0]));
        String[] keys = new String[entries.size()];
        String[] values = new String[entries.size()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = entries.get(i)[0];
            values[i] = entries.get(i)[1];
        }
        return new Parsed("object", keys, values);
    }

    /** The value at the parser's current token as it stands in {@code text}, nested values included. */
    private static String jsonText(JsonParser p, JsonToken value, String text) throws IOException {
        int start = (int) p.currentTokenLocation().getCharOffset();
        p.skipChildren();
        int end = (int) p.currentTokenLocation().getCharOffset() + (value.isStructStart() ? 1 : p.getTextLength());
        return text.substring(start, end);
    }

    private static String type(JsonToken first) {
        if (first == null) {
            return NOT_JSON;
        }
        return switch (first) {
            case START_ARRAY -> "array";
            case VALUE_STRING -> "string";
            case VALUE_TRUE, VALUE_FALSE -> "boolean";
            case VALUE_NULL -> "null";
            default -> "number";
        };
    }
}
