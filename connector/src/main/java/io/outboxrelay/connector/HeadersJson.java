package io.outboxrelay.connector;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads the {@code headers} column as PostgreSQL prints a jsonb value. The claim used to split the
 * object in SQL ({@code jsonb_each} plus two {@code array_agg} per row), which cost about a sixth of
 * the claim+stamp time on the database, the relay's bottleneck; scanning the text here is cheaper.
 * String values become their text; any other value (number, boolean, null, object, array) its JSON
 * text, exactly as before. Entries come sorted by key.
 */
final class HeadersJson {
    /** The JSON type of the column ({@code null} when SQL NULL) and, for an object, its entries. */
    record Parsed(String type, String[] keys, String[] values) {
        static final Parsed NONE = new Parsed(null, null, null);
    }

    private final String text;
    private int pos;

    private HeadersJson(String text) {
        this.text = text;
    }

    static Parsed parse(String text) {
        if (text == null) {
            return Parsed.NONE;
        }
        HeadersJson p = new HeadersJson(text);
        p.skipSpace();
        String type = p.peekType();
        if (!"object".equals(type)) {
            return new Parsed(type, null, null);
        }
        try {
            return p.object();
        } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
            return new Parsed("text that is not valid JSON", null, null);
        }
    }

    private String peekType() {
        if (pos >= text.length()) {
            return "text that is not valid JSON";
        }
        return switch (text.charAt(pos)) {
            case '{' -> "object";
            case '[' -> "array";
            case '"' -> "string";
            case 't', 'f' -> "boolean";
            case 'n' -> "null";
            default -> "number";
        };
    }

    private Parsed object() {
        expect('{');
        List<String[]> entries = new ArrayList<>();
        skipSpace();
        if (text.charAt(pos) == '}') {
            pos++;
        } else {
            while (true) {
                skipSpace();
                String key = string();
                skipSpace();
                expect(':');
                skipSpace();
                String value = text.charAt(pos) == '"' ? string() : rawValue();
                entries.add(new String[] {key, value});
                skipSpace();
                char c = text.charAt(pos++);
                if (c == '}') {
                    break;
                }
                if (c != ',') {
                    throw new IllegalArgumentException("expected , or } at " + (pos - 1));
                }
            }
        }
        entries.sort((a, b) -> a[0].compareTo(b[0]));
        String[] keys = new String[entries.size()];
        String[] values = new String[entries.size()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = entries.get(i)[0];
            values[i] = entries.get(i)[1];
        }
        return new Parsed("object", keys, values);
    }

    /** A JSON string at {@code pos}, unescaped. */
    private String string() {
        expect('"');
        StringBuilder out = null;
        int start = pos;
        while (true) {
            char c = text.charAt(pos);
            if (c == '"') {
                String s = out == null ? text.substring(start, pos) : out.append(text, start, pos).toString();
                pos++;
                return s;
            }
            if (c != '\\') {
                pos++;
                continue;
            }
            if (out == null) {
                out = new StringBuilder(pos - start + 16);
            }
            out.append(text, start, pos);
            char e = text.charAt(pos + 1);
            pos += 2;
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                }
                default -> throw new IllegalArgumentException("bad escape \\" + e);
            }
            start = pos;
        }
    }

    /** The JSON text of a non-string value at {@code pos}: a literal, a number, an object or an array. */
    private String rawValue() {
        int start = pos;
        int depth = 0;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '"') {
                string();
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (depth == 0) {
                    break;
                }
                depth--;
            } else if (c == ',' && depth == 0) {
                break;
            }
            pos++;
        }
        return text.substring(start, pos).stripTrailing();
    }

    private void expect(char c) {
        if (text.charAt(pos) != c) {
            throw new IllegalArgumentException("expected " + c + " at " + pos);
        }
        pos++;
    }

    private void skipSpace() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }
}
