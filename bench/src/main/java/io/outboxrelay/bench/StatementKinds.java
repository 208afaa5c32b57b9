package io.outboxrelay.bench;

import io.outboxrelay.common.DatabaseText;
import io.outboxrelay.common.NamedSql;
import io.outboxrelay.connector.OutboxSourceConnector;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Tells a pg_stat_statements entry's kind: the writers' own statement, or one of the connector's, a claim (the
 * relay's ClaimRows, which also carries the stamps of the rows acknowledged since the last one), a stamp, a wake-up
 * statement (arming or looking at the flag, LISTEN, NOTIFY) or other. The relay's named statements
 * ({@code outbox-relay.sql}, read from the connector as it ships) are recognised by their words, whatever the
 * table, column and parameter text the relay put in; its statements in Java code by the wake-up functions they
 * call. So a redesigned wake-up is classified without a change here as long as it names or calls what it does.
 */
final class StatementKinds {
    static final String CLAIM = "claim";
    static final String STAMP = "stamp";
    static final String WAKEUP = "wake-up";
    static final String OTHER = "other";
    static final String WRITERS = "writers";
    /** Run inside a function or trigger (pg_stat_statements' toplevel false): e.g. the relay's trigger in an insert. */
    static final String NESTED = "nested";

    private static final Pattern COMMENT = Pattern.compile("--[^\n]*|/\\*.*?\\*/", Pattern.DOTALL);
    /** Quoted identifiers and literals, {placeholders}, :named and $n parameters: what differs between template and log. */
    private static final Pattern VARYING = Pattern.compile(
        "\"[^\"]*\"|'(?:[^']|'')*'|\\{[^}]*}|(?<!:):[a-z_][a-z0-9_]*|\\$\\d+");
    private static final Pattern WORD = Pattern.compile("[a-z_][a-z0-9_]*");
    /** Literals pg_stat_statements may show as $n. */
    private static final Set<String> CONSTANT_WORDS = Set.of("true", "false", "null");
    private static final Pattern WAKEUP_WORDS = Pattern.compile("\\b(setval|pg_sequence_last_value|"
        + "pg_notification_queue_usage|pg_snapshot_xip|pg_current_snapshot|pg_notify|listen|unlisten)\\b");
    private static final Pattern WAKEUP_NAMES = Pattern.compile("(?i)wake|arm|flag|look|listen|notif");

    private final Map<String, String> namedByWords;
    private final String writerWords;

    /** @param named statement name -> SQL text as in its file; @param writerSql the writers' statement */
    StatementKinds(Map<String, String> named, String writerSql) {
        this.namedByWords = new LinkedHashMap<>();
        named.forEach((name, sql) -> namedByWords.put(words(sql), name));
        this.writerWords = words(writerSql);
    }

    /** The relay's named statements as the connector on the class path ships them. */
    static StatementKinds shipped(String writerSql) {
        NamedSql sql = NamedSql.load(OutboxSourceConnector.class, "outbox-relay.sql");
        Map<String, String> named = new LinkedHashMap<>();
        for (String name : sql.names()) {
            // as the relay sends them: ClaimRows' and PoisonRows' text placeholders expanded (the logged claim
            // matched no template before, and was counted a wake-up statement for its pg_notify)
            named.put(name, DatabaseText.expand(sql.get(name)));
        }
        return new StatementKinds(named, writerSql);
    }

    /** The named statement this query is, or null. */
    String name(String query) {
        return namedByWords.get(words(query));
    }

    /** One of the kinds above. */
    String kind(String query, boolean toplevel) {
        if (!toplevel) {
            return NESTED;
        }
        String w = words(query);
        if (w.equals(writerWords)) {
            return WRITERS;
        }
        String name = namedByWords.get(w);
        if (name != null) {
            return name.contains("Claim") ? CLAIM : name.contains("Stamp") ? STAMP
                : WAKEUP_NAMES.matcher(name).find() ? WAKEUP : OTHER;
        }
        return WAKEUP_WORDS.matcher(w).find() ? WAKEUP : OTHER;
    }

    /** The statement's words in order, lower case, without comments, names, literals and parameters. */
    static String words(String sql) {
        String s = VARYING.matcher(COMMENT.matcher(sql.toLowerCase()).replaceAll(" ")).replaceAll(" ");
        StringBuilder out = new StringBuilder();
        var m = WORD.matcher(s);
        while (m.find()) {
            if (!CONSTANT_WORDS.contains(m.group())) {
                out.append(m.group()).append(' ');
            }
        }
        return out.toString().trim();
    }
}
