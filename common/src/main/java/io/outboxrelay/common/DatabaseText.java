package io.outboxrelay.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * How the relay and the mention task read text in a database whose encoding is not UTF8. PostgreSQL converts text
 * to the driver's UTF8 as it sends a row, and refuses a whole statement's result when one value has a byte that maps
 * to no character (22P05): SQL_ASCII stores any bytes, and the single-byte encodings (WIN1252 and the like) store
 * every byte, also those they leave undefined. So in these databases a statement that reads what writers stored
 * (the relay's {@code ClaimRows}, the mention task's {@code ReadUnroutedBatch}: their {@code x.raw}, the encoding's
 * name) sends the bytes of each text as hex, and the task decodes them here, strictly, with the JVM's table of the
 * same encoding: a row with such a byte becomes a row to poison or a message to leave unrouted, and no row fails
 * the statement. SQL_ASCII declares no encoding; its bytes are read as the UTF-8 the writer meant. Other encodings
 * are sent as text, as in a UTF8 database (docs/operations.md).
 */
public final class DatabaseText {
    /**
     * PostgreSQL's name of a server encoding, and the JVM's charset for it ({@code raw-encodings.properties}): SQL_ASCII
     * and the single-byte encodings. The multibyte ones (EUC_JP, ...) are not there: their tables differ between the
     * two (vendor extensions), and a text the JVM read otherwise would be a changed event. Those, and encodings this
     * JVM lacks (a runtime without the jdk.charsets module), travel as text.
     */
    private static final Pattern SENT = Pattern.compile("\\{sent\\(([A-Za-z_][A-Za-z0-9_.]*)\\)}");
    private static final Map<String, Charset> RAW = load();

    private DatabaseText() {
    }

    /** The encodings whose texts travel as bytes, and the charset each is read with. */
    public static Map<String, Charset> rawEncodings() {
        return RAW;
    }

    /**
     * The statement with its two placeholders of how texts travel expanded: {@code {raw_encoding}}, the database's
     * encoding when its texts travel as bytes, else null (a statement names it {@code x.raw}); and
     * {@code {sent(e)}}, the text expression {@code e} as the statement sends it: itself, or the hex of its bytes
     * where {@code x.raw} is not null. {@code e} is a column reference ({@code w.id}).
     */
    public static String expand(String sql) {
        String encodings = RAW.keySet().stream().sorted().map(n -> "'" + n + "'").collect(Collectors.joining(", "));
        String out = SENT.matcher(sql.replace("{raw_encoding}", "CASE WHEN current_setting('server_encoding') IN ("
                + encodings + ") THEN current_setting('server_encoding') END"))
            .replaceAll("CASE WHEN x.raw IS NULL THEN $1 ELSE encode(convert_to($1, x.raw), 'hex') END");
        if (out.contains("{sent(")) {
            throw new IllegalArgumentException("{sent(...)} takes a column reference such as w.id: " + sql);
        }
        return out;
    }

    /**
     * A text as the statement sent it: {@code encoding} null when the server converted it (bytes of UTF-8), else the
     * database's encoding, whose bytes came as hex. Strict: a byte without a character throws.
     */
    public static String strict(byte[] bytes, String encoding) throws CharacterCodingException {
        Charset charset = charset(encoding);
        byte[] text = encoding == null ? bytes : unhex(bytes);
        if (charset == StandardCharsets.UTF_8) {
            // as the JDK decodes UTF-8 fastest, checked only when it replaced something
            String utf8 = new String(text, charset);
            if (utf8.indexOf('\uFFFD') >= 0) {
                decoder(charset, CodingErrorAction.REPORT).decode(ByteBuffer.wrap(text));
            }
            return utf8;
        }
        return decoder(charset, CodingErrorAction.REPORT).decode(ByteBuffer.wrap(text)).toString();
    }

    /**
     * A text the task only logs or stores (the id of a row to poison, last_error): a byte without a character becomes
     * U+FFFD, or "?" in a single-byte encoding, where the task may send the text back (a poison reason quoting the last
     * error) and the server must be able to convert it into the database's encoding.
     */
    public static String lenient(byte[] bytes, String encoding) {
        return lenient(bytes, encoding, "?");
    }

    /**
     * A stand-in for a text that could not be read, that no text read strictly from a single-byte database equals: a
     * byte without a character becomes U+FFFD, which no such encoding has (SQL_ASCII, read as UTF-8, could hold it).
     */
    public static String standIn(byte[] bytes, String encoding) {
        return lenient(bytes, encoding, "\uFFFD");
    }

    private static String lenient(byte[] bytes, String encoding, String replacement) {
        if (bytes == null) {
            return null;
        }
        Charset charset = charset(encoding);
        byte[] text = encoding == null ? bytes : unhex(bytes);
        if (charset == StandardCharsets.UTF_8) {
            return new String(text, charset);
        }
        try {
            return decoder(charset, CodingErrorAction.REPLACE).replaceWith(replacement).decode(ByteBuffer.wrap(text))
                .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalStateException("a replacing decoder threw", e); // REPLACE never reports
        }
    }

    /** Why a field's bytes could not be read, for the row's poison reason or the message's fault. */
    public static String unreadable(String field, String encoding) {
        return "SQL_ASCII".equals(encoding)
            ? field + " holds bytes that are not valid UTF-8 (the database's encoding is SQL_ASCII, which stores any"
                + " bytes), so the relay cannot tell what text the writer meant; rewrite the row's " + field
                + " as UTF-8 text"
            : field + " holds bytes that are no character of the database's encoding " + encoding + " (which stores"
                + " them unchecked), so they have no Unicode text to send; rewrite the row's " + field
                + " with characters of " + encoding;
    }

    private static Map<String, Charset> load() {
        Properties names = new Properties();
        try (InputStream in = DatabaseText.class.getResourceAsStream("raw-encodings.properties")) {
            names.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("raw-encodings.properties is missing from the plugin's jar", e);
        }
        return names.stringPropertyNames().stream().filter(n -> Charset.isSupported(names.getProperty(n)))
            .collect(Collectors.toUnmodifiableMap(n -> n, n -> Charset.forName(names.getProperty(n))));
    }

    /** The charset of texts the statement sent: UTF-8 as the server converted them (null), else the encoding's. */
    private static Charset charset(String encoding) {
        if (encoding == null) {
            return StandardCharsets.UTF_8;
        }
        Charset charset = RAW.get(encoding);
        if (charset == null) {
            throw new IllegalStateException("the statement sent the bytes of " + encoding + ", which has no charset here");
        }
        return charset;
    }

    private static CharsetDecoder decoder(Charset charset, CodingErrorAction action) {
        return charset.newDecoder().onMalformedInput(action).onUnmappableCharacter(action);
    }

    private static byte[] unhex(byte[] hex) {
        return HexFormat.of().parseHex(new String(hex, StandardCharsets.US_ASCII));
    }
}
