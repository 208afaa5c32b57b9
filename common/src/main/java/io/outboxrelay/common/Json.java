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
}
