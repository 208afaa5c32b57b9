package io.outboxrelay.common;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON (RFC 8259) reader for the few JSON columns the connector reads (a message's
 * {@code blocks}, an event's {@code headers}), so the plugin needs no JSON library.
 *
 * <p>Values map to {@code Map<String, Object>} (a {@link LinkedHashMap}, member order kept; a
 * repeated name keeps its last value, as PostgreSQL's {@code jsonb} does), {@code List<Object>},
 * {@code String}, {@code Long} (integers that fit) or {@link BigDecimal} (everything else),
 * {@code Boolean} and {@code null}. Malformed input throws {@link IllegalArgumentException} naming
 * the character position; the message never repeats the input, which may be private.
 */
public final class JsonReader {
    /** Deeper nesting is refused instead of overflowing the stack. */
    static final int MAX_DEPTH = 512;

    private final String text;
    private int pos;
    private int depth;

    private JsonReader(String text) {
        this.text = text;
    }

    /**
     * @param json one JSON value, optionally surrounded by whitespace
     * @throws IllegalArgumentException when {@code json} is null or not exactly one valid JSON value
     */
    public static Object parse(String json) {
        if (json == null) {
            throw new IllegalArgumentException("JSON text is null");
        }
        JsonReader reader = new JsonReader(json);
        reader.skipWhitespace();
        Object value = reader.readValue();
        reader.skipWhitespace();
        if (reader.pos < json.length()) {
            throw reader.error("unexpected content after the JSON value");
        }
        return value;
    }

    private Object readValue() {
        if (pos >= text.length()) {
            throw error("unexpected end of input, expected a value");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return readObject();
            case '[':
                return readArray();
            case '"':
                return readString();
            case 't':
                return readLiteral("true", Boolean.TRUE);
            case 'f':
                return readLiteral("false", Boolean.FALSE);
            case 'n':
                return readLiteral("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return readNumber();
                }
                throw error("unexpected character '" + printable(c) + "', expected a value");
        }
    }

    private Map<String, Object> readObject() {
        enter();
        pos++; // '{'
        Map<String, Object> out = new LinkedHashMap<>();
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            depth--;
            return out;
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                throw error("expected a member name in double quotes");
            }
            String name = readString();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            out.put(name, readValue());
            skipWhitespace();
            char c = next("',' or '}'");
            if (c == '}') {
                depth--;
                return out;
            }
            if (c != ',') {
                throw error(pos - 1, "expected ',' or '}' but found '" + printable(c) + "'");
            }
        }
    }

    private List<Object> readArray() {
        enter();
        pos++; // '['
        List<Object> out = new ArrayList<>();
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            depth--;
            return out;
        }
        while (true) {
            skipWhitespace();
            out.add(readValue());
            skipWhitespace();
            char c = next("',' or ']'");
            if (c == ']') {
                depth--;
                return out;
            }
            if (c != ',') {
                throw error(pos - 1, "expected ',' or ']' but found '" + printable(c) + "'");
            }
        }
    }

    private String readString() {
        int start = pos;
        pos++; // opening quote
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error(start, "unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c == '\\') {
                out.append(readEscape());
            } else if (c < 0x20) {
                throw error(pos - 1, "unescaped control character U+" + hex4(c) + " in string");
            } else {
                out.append(c);
            }
        }
    }

    private char readEscape() {
        char c = next("an escape character");
        switch (c) {
            case '"': return '"';
            case '\\': return '\\';
            case '/': return '/';
            case 'b': return '\b';
            case 'f': return '\f';
            case 'n': return '\n';
            case 'r': return '\r';
            case 't': return '\t';
            case 'u':
                if (pos + 4 > text.length()) {
                    throw error("truncated \\u escape");
                }
                int value = 0;
                for (int i = 0; i < 4; i++) {
                    int digit = Character.digit(text.charAt(pos + i), 16);
                    if (digit < 0) {
                        throw error(pos + i, "invalid hex digit in \\u escape");
                    }
                    value = value * 16 + digit;
                }
                pos += 4;
                return (char) value;
            default:
                throw error(pos - 1, "invalid escape '\\" + printable(c) + "'");
        }
    }

    private Object readNumber() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (peek() == '0') {
            pos++;
        } else if (isDigit(peek())) {
            skipDigits();
        } else {
            throw error("expected a digit");
        }
        boolean integral = true;
        if (peek() == '.') {
            integral = false;
            pos++;
            if (!isDigit(peek())) {
                throw error("expected a digit after the decimal point");
            }
            skipDigits();
        }
        if (peek() == 'e' || peek() == 'E') {
            integral = false;
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!isDigit(peek())) {
                throw error("expected a digit in the exponent");
            }
            skipDigits();
        }
        String literal = text.substring(start, pos);
        if (integral && literal.length() <= 18) {
            return Long.parseLong(literal); // at most 18 digits (or '-' and 17) always fits
        }
        if (integral) {
            BigInteger big = new BigInteger(literal);
            return big.bitLength() < 64 ? (Object) big.longValue() : new BigDecimal(big);
        }
        return new BigDecimal(literal);
    }

    private Object readLiteral(String literal, Object value) {
        if (!text.startsWith(literal, pos)) {
            throw error("invalid literal, expected '" + literal + "'");
        }
        pos += literal.length();
        return value;
    }

    private void enter() {
        if (++depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH + " levels");
        }
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private void skipDigits() {
        while (isDigit(peek())) {
            pos++;
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** The current character, or NUL at the end (NUL can never start a valid token here). */
    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private char next(String expected) {
        if (pos >= text.length()) {
            throw error("unexpected end of input, expected " + expected);
        }
        return text.charAt(pos++);
    }

    private void expect(char c) {
        char found = next("'" + c + "'");
        if (found != c) {
            throw error(pos - 1, "expected '" + c + "' but found '" + printable(found) + "'");
        }
    }

    private IllegalArgumentException error(String what) {
        return error(pos, what);
    }

    private static IllegalArgumentException error(int at, String what) {
        return new IllegalArgumentException("malformed JSON at position " + at + ": " + what);
    }

    private static String printable(char c) {
        return c < 0x20 || c > 0x7e ? "U+" + hex4(c) : String.valueOf(c);
    }

    private static String hex4(char c) {
        return String.format("%04X", (int) c);
    }
}
