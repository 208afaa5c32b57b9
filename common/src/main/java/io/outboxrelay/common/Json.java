package io.outboxrelay.common;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/** The plugin's one Jackson factory: thread-safe, and sharing it keeps parsers and generators cheap. */
public final class Json {
    public static final JsonFactory FACTORY = new JsonFactory();

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
