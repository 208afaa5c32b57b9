package io.outboxrelay.common;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/** The plugin's one Jackson factory: thread-safe, and sharing it keeps parsers and generators cheap. */
public final class Json {
    /**
     * Reads whatever jsonb holds. Jackson's default limits (1,000 digits, 1,000 levels, 50,000-character names,
     * 20 million characters) are below PostgreSQL's, and jsonb prints {@code 1e1000} as a 1,001-digit number: a
     * valid value past them was refused as "not valid JSON". The plugin only streams through values (no recursion
     * for the depth to overflow), and the database bounds their size.
     */
    public static final JsonFactory FACTORY = JsonFactory.builder()
        .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(Integer.MAX_VALUE)
            .maxNumberLength(Integer.MAX_VALUE).maxStringLength(Integer.MAX_VALUE).maxNameLength(Integer.MAX_VALUE)
            .build())
        .build();

    /** Writes one JSON value with a generator. */
    @FunctionalInterface
    public interface Writing {
        void to(JsonGenerator g) throws IOException;
    }

    private Json() {
    }

    /** The JSON text {@code writing} produces. */
    public static String write(Writing writing) {
        StringWriter out = new StringWriter(64);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            writing.to(g);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter never fails: only a bug in writing gets here
        }
        return out.toString();
    }

    /** Bytes of {@code s} written as a JSON string's contents, UTF-8 and escapes counted (an upper bound). */
    public static long stringBytes(String s) {
        return stringBytes(s, utf8Length(s));
    }

    /**
     * Bytes of {@code s} written as a JSON string's contents: its UTF-8 bytes ({@code utf8Bytes}) plus one
     * for each quote or backslash and up to five for each control character ({@code \u0001}); a long, as escapes can
     * take a text of a gigabyte past an int.
     */
    public static long stringBytes(String s, int utf8Bytes) {
        long extra = 0;
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                extra++;
            } else if (c < 0x20) {
                extra += 5;
            }
        }
        return utf8Bytes + extra;
    }

    /** Bytes of {@code s} in UTF-8 (the server's encoding of the payload text), without encoding it. */
    public static int utf8Length(String s) {
        int n = s.length();
        int i = 0;
        while (i < n && s.charAt(i) < 0x80) {
            i++; // the common case, ASCII JSON: one byte per char, a loop the JIT keeps tight
        }
        int bytes = i;
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }
}
