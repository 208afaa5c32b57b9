package io.outboxrelay.mentions;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.outboxrelay.common.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The @mention grammar of the recovery scan: which handles a message's {@code blocks} mention. Every Java path of
 * this plugin uses this one parser. The chat server's live path is Go code of its own, which this grammar follows
 * rule for rule (below); the two are kept in step by hand and by {@code MentionGrammarTest}'s cases, not by sharing
 * code, so a change to the server's grammar must be made here too.
 *
 * <p>Only blocks of type {@code text} are read (never {@code code} or anything else). A handle is an
 * {@code @} at the start of the text or after a non-word character (anything but an ASCII letter, digit or
 * {@code _}, so {@code bob@example.com} is no mention), followed by {@code [A-Za-z0-9][A-Za-z0-9_.-]*};
 * trailing dots are dropped ({@code "thanks @ada."}). Handles are lower-cased, de-duplicated and
 * returned in first-seen order. {@code @all}, {@code @channel} and {@code @agents} are reserved
 * pings: they come back as handles like any other and {@link #isReservedPing} tells them apart.
 *
 * <p>A word character is ASCII, as {@code \w} is in the chat server's own (Go) grammar: {@code 请@ada} mentions
 * {@code ada}, as it does on the live path, where text in scripts without spaces puts the {@code @} right after a
 * letter. Counting every Unicode letter as a word character lost those mentions.
 */
public final class MentionGrammar {
    private static final Pattern MENTION =
        Pattern.compile("(?<![A-Za-z0-9_])@([A-Za-z0-9][A-Za-z0-9_.\\-]*)");
    private static final Set<String> RESERVED = Set.of("all", "channel", "agents");
    private static final String NOT_JSON = "blocks is not valid JSON: ";

    private MentionGrammar() {
    }

    /**
     * @param blocksJson the message's {@code blocks} column as JSON text
     * @return the mentioned handles, lower-cased, each once, in first-seen order
     * @throws MalformedBlocksException when the text is not a JSON array of block objects
     */
    public static List<String> handles(String blocksJson) {
        if (blocksJson == null) {
            throw new MalformedBlocksException(NOT_JSON + "JSON text is null");
        }
        Set<String> out = new LinkedHashSet<>();
        String fault;
        try (JsonParser p = Json.FACTORY.createParser(blocksJson)) {
            fault = read(p, out);
            if (p.nextToken() != null) {
                throw new MalformedBlocksException(NOT_JSON + "unexpected content after the JSON value");
            }
        } catch (JsonProcessingException e) {
            // Jackson's own message may quote the text, which is private: give the position alone
            throw new MalformedBlocksException(NOT_JSON + "malformed JSON at position " + e.getLocation().getCharOffset());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // reading a String cannot fail
        }
        if (fault != null) {
            throw new MalformedBlocksException(fault);
        }
        return List.copyOf(out);
    }

    /**
     * Reads the blocks into {@code out} and returns the first fault in them, or null. It parses on to the
     * end after a fault, so text that is not JSON is reported as such wherever the fault is.
     */
    private static String read(JsonParser p, Set<String> out) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            throw new MalformedBlocksException(NOT_JSON + "no JSON value");
        }
        if (t != JsonToken.START_ARRAY) {
            p.skipChildren();
            return "blocks is not a JSON array but " + kind(t);
        }
        String fault = null;
        for (int i = 0; (t = p.nextToken()) != JsonToken.END_ARRAY; i++) {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                fault = fault != null ? fault : "block " + i + " is not a JSON object but " + kind(t);
                continue;
            }
            String type = null;
            JsonToken text = null;
            String textValue = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if ("type".equals(name)) {
                    type = value == JsonToken.VALUE_STRING ? p.getText() : null;
                } else if ("text".equals(name)) {
                    text = value;
                    textValue = value == JsonToken.VALUE_STRING ? p.getText() : null;
                }
                p.skipChildren();
            }
            if (fault != null || !"text".equals(type) || text == null || text == JsonToken.VALUE_NULL) {
                continue;
            }
            if (textValue == null) {
                fault = "block " + i + " has a text that is not a string but " + kind(text);
            } else {
                collect(textValue, out);
            }
        }
        return fault;
    }

    /** The handles mentioned in one plain text, in first-seen order (no JSON involved). */
    public static List<String> handlesInText(String text) {
        Set<String> out = new LinkedHashSet<>();
        collect(text, out);
        return List.copyOf(out);
    }

    /** True for {@code all}, {@code channel} and {@code agents} (any case): they ping every agent member. */
    public static boolean isReservedPing(String handle) {
        return handle != null && RESERVED.contains(handle.toLowerCase(Locale.ROOT));
    }

    private static void collect(String text, Set<String> out) {
        Matcher m = MENTION.matcher(text);
        while (m.find()) {
            String handle = m.group(1);
            int end = handle.length();
            while (handle.charAt(end - 1) == '.') {
                end--; // never reaches 0: the first character is a letter or digit
            }
            out.add(handle.substring(0, end).toLowerCase(Locale.ROOT));
        }
    }

    private static String kind(JsonToken value) {
        return switch (value) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> "a number";
        };
    }
}
