package io.outboxrelay.writer;

import java.util.Map;

/**
 * The little JSON this module writes: a {@code Map<String, String>} as a JSON object of strings
 * (the {@code headers} column). Keeps the module free of a JSON library. Strings are escaped per
 * RFC 8259; characters PostgreSQL cannot store in {@code jsonb} (NUL, unpaired surrogates) are
 * rejected up front with the offending key named, instead of failing inside the caller's transaction.
 */
final class JsonText {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonText() {
    }

    /** The map as a JSON object, or null for a null or empty map (no headers). */
    static String object(Map<String, String> map) {
        if (map == null || map.isEmpty()) {
            return null;
        }
        StringBuilder out = new StringBuilder(32 * map.size());
        out.append('{');
        for (Map.Entry<String, String> e : map.entrySet()) {
            String key = e.getKey();
            if (key == null) {
                throw new IllegalArgumentException("header names must not be null");
            }
            if (e.getValue() == null) {
                throw new IllegalArgumentException("header '" + key + "' has a null value; leave the header out instead");
            }
            if (out.length() > 1) {
                out.append(',');
            }
            quote(out, key, key);
            out.append(':');
            quote(out, e.getValue(), key);
        }
        return out.append('}').toString();
    }

    /** {@code s} as a JSON string literal, quotes included. */
    static String quote(String s) {
        return quote(new StringBuilder(s.length() + 2), s, "(string)").toString();
    }

    private static StringBuilder quote(StringBuilder out, String s, String what) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\0' -> throw new IllegalArgumentException(
                    "header '" + what + "' contains a NUL character, which PostgreSQL jsonb cannot store");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
                    } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
                        && Character.isLowSurrogate(s.charAt(i + 1))) {
                        out.append(c).append(s.charAt(++i));
                    } else if (Character.isSurrogate(c)) {
                        throw new IllegalArgumentException(
                            "header '" + what + "' contains an unpaired UTF-16 surrogate at index " + i);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"');
    }
}
