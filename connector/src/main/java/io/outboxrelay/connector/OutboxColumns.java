package io.outboxrelay.connector;

import io.outboxrelay.common.Identifiers;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The columns that hold an event's six fields ({@code outbox.column.*}): the names of
 * {@code schemas/sql/outbox.sql} by default, or an existing table's own, such as Debezium's
 * ({@code aggregateid} for the subject). {@code headers} is empty when the table has no headers column.
 * The relay's state columns ({@link #STATE_COLUMNS}) are never mapped: they are the relay's contract.
 */
record OutboxColumns(String id, String type, String subject, String payload, String headers, String occurredAt) {
    static final OutboxColumns DEFAULT = new OutboxColumns("id", "type", "subject", "payload", "headers", "occurred_at");

    static final List<String> STATE_COLUMNS = List.of("seq", "fanned_out_at", "fanout", "attempts",
        "next_attempt_at", "last_error", "poisoned_at", "lease_owner", "lease_until");

    OutboxColumns {
        for (String column : List.of(id, type, subject, payload, occurredAt)) {
            if (column == null || column.isEmpty()) {
                throw new IllegalArgumentException("only the headers column may be left unmapped");
            }
        }
        if (headers == null) {
            throw new IllegalArgumentException("headers is empty for no headers column, not null");
        }
    }

    /** {@code {col.subject}}, optionally qualified by a table alias ({@code e.{col.subject}}). */
    private static final Pattern PLACEHOLDER = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*\\.)?\\{col\\.([a-z_]+)}");

    /** The fields by the name their key and placeholder use (id, type, subject, payload, headers, occurred_at). */
    Map<String, String> byField() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("id", id);
        out.put("type", type);
        out.put("subject", subject);
        out.put("payload", payload);
        out.put("headers", headers);
        out.put("occurred_at", occurredAt);
        return out;
    }

    boolean hasHeaders() {
        return !headers.isEmpty();
    }

    /**
     * {@code sql} with every {@code {col.<field>}} replaced by the field's column as a quoted identifier,
     * keeping an alias in front of it; with no headers column, {@code {col.headers}} (alias and all) is a
     * NULL of jsonb, which reads as a row without headers.
     */
    String expand(String sql) {
        Map<String, String> fields = byField();
        Matcher m = PLACEHOLDER.matcher(sql);
        StringBuilder out = new StringBuilder(sql.length() + 32);
        while (m.find()) {
            String column = fields.get(m.group(2));
            if (column == null) {
                throw new IllegalArgumentException("no event field " + m.group(2) + " in " + m.group());
            }
            String alias = m.group(1) == null ? "" : m.group(1);
            m.appendReplacement(out, Matcher.quoteReplacement(
                column.isEmpty() ? "NULL::jsonb" : alias + Identifiers.quote(column)));
        }
        return m.appendTail(out).toString();
    }

    /**
     * What the mapping adds to the fingerprint of the records a connector writes ({@link SharedTableGuard}):
     * nothing for the default mapping, so connectors of versions before the mapping keep their fingerprint.
     */
    String fingerprintPart() {
        return equals(DEFAULT) ? "" : "columns " + String.join("\n", byField().values()) + "\n\n";
    }
}
