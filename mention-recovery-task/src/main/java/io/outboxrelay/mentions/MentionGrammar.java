package io.outboxrelay.mentions;

import io.outboxrelay.common.JsonReader;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one @mention grammar: which handles a message's {@code blocks} mention. Every path that routes
 * mentions uses this parser, so the recovery scan and any other caller can never disagree.
 *
 * <p>Only blocks of type {@code text} are read (never {@code code} or anything else). A handle is an
 * {@code @} at the start of the text or after a non-word character (anything but a letter, digit or
 * {@code _}, so {@code bob@example.com} is no mention), followed by {@code [A-Za-z0-9][A-Za-z0-9_.-]*};
 * trailing dots are dropped ({@code "thanks @ada."}). Handles are lower-cased, de-duplicated and
 * returned in first-seen order. {@code @all}, {@code @channel} and {@code @agents} are reserved
 * pings: they come back as handles like any other and {@link #isReservedPing} tells them apart.
 */
public final class MentionGrammar {
    private static final Pattern MENTION =
        Pattern.compile("(?<![\\p{L}\\p{N}_])@([A-Za-z0-9][A-Za-z0-9_.\\-]*)");
    private static final Set<String> RESERVED = Set.of("all", "channel", "agents");

    private MentionGrammar() {
    }

    /**
     * @param blocksJson the message's {@code blocks} column as JSON text
     * @return the mentioned handles, lower-cased, each once, in first-seen order
     * @throws MalformedBlocksException when the text is not a JSON array of block objects
     */
    public static List<String> handles(String blocksJson) {
        Object parsed;
        try {
            parsed = JsonReader.parse(blocksJson);
        } catch (IllegalArgumentException e) {
            throw new MalformedBlocksException("blocks is not valid JSON: " + e.getMessage(), e);
        }
        if (!(parsed instanceof List<?> blocks)) {
            throw new MalformedBlocksException("blocks is not a JSON array but " + kind(parsed));
        }
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < blocks.size(); i++) {
            if (!(blocks.get(i) instanceof Map<?, ?> block)) {
                throw new MalformedBlocksException("block " + i + " is not a JSON object but " + kind(blocks.get(i)));
            }
            if (!"text".equals(block.get("type"))) {
                continue;
            }
            Object text = block.get("text");
            if (text == null) {
                continue;
            }
            if (!(text instanceof String s)) {
                throw new MalformedBlocksException("block " + i + " has a text that is not a string but " + kind(text));
            }
            collect(s, out);
        }
        return List.copyOf(out);
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

    private static String kind(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Map) {
            return "an object";
        }
        if (value instanceof List) {
            return "an array";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        return "a number";
    }
}
