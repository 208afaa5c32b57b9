package io.outboxrelay.connector;

import static io.outboxrelay.connector.OutboxSourceConnectorConfig.*;

import io.outboxrelay.common.Identifiers;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/** The validators of {@link OutboxConfigDef}'s keys: each names the key, the value and what would be valid. */
final class ConfigValidators {
    static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");

    private ConfigValidators() {
    }

    static final class TopicValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            String topic = (String) value;
            if (topic == null || !TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
                throw new ConfigException(name, value,
                    "a Kafka topic name is 1-249 characters of letters, digits, '.', '_' and '-' (and not '.' or '..')");
            }
        }

        @Override
        public String toString() {
            return "Kafka topic name";
        }
    }

    static final class OptionalTopicValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            if (value != null && !((String) value).isEmpty()) {
                new TopicValidator().ensureValid(name, value);
            }
        }

        @Override
        public String toString() {
            return "empty, or a Kafka topic name";
        }
    }

    static final class GlobListValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            @SuppressWarnings("unchecked")
            List<String> globs = (List<String>) value;
            if (globs == null || globs.isEmpty()) {
                throw new ConfigException(name, value, "list at least one event type glob, or * for every type");
            }
            for (String glob : globs) {
                if (!Subscription.GLOB.matcher(glob).matches()) {
                    throw new ConfigException(name, value, "'" + glob + "' is not an event type glob: use letters,"
                        + " digits and . _ : / - with * (any characters) and ? (one character), e.g. supplier.*");
                }
            }
        }

        @Override
        public String toString() {
            return "comma-separated globs, e.g. supplier.*,note.created";
        }
    }

    static final class SubscriptionNamesValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            @SuppressWarnings("unchecked")
            List<String> names = (List<String>) value;
            if (names == null) {
                return; // missing: ConfigDef says so ("Missing required configuration"), once is enough
            }
            if (names.isEmpty()) {
                throw new ConfigException(name, value, "name at least one subscription, e.g. webhooks,mail");
            }
            Set<String> seen = new HashSet<>();
            for (String n : names) {
                if (!Subscription.NAME.matcher(n).matches()) {
                    throw new ConfigException(name, value, "subscription name '" + n
                        + "' may only contain letters, digits, '.', '_' and '-'");
                }
                if (!seen.add(n)) {
                    throw new ConfigException(name, value, "subscription '" + n + "' is listed twice");
                }
            }
        }

        @Override
        public String toString() {
            return "comma-separated names of letters, digits, '.', '_', '-'";
        }
    }

    static final class ChoiceValidator implements ConfigDef.Validator {
        private final List<String> choices;

        ChoiceValidator(List<String> choices) {
            this.choices = choices;
        }

        @Override
        public void ensureValid(String name, Object value) {
            if (value == null || !choices.contains(((String) value).trim().toLowerCase(Locale.ROOT))) {
                throw new ConfigException(name, value, "one of " + String.join(", ", choices));
            }
        }

        @Override
        public String toString() {
            return String.join(", ", choices);
        }
    }

    static final class UriReferenceValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            String v = value == null ? "" : ((String) value).trim();
            if (v.isEmpty()) {
                return;
            }
            try {
                new URI(v);
            } catch (URISyntaxException e) {
                throw new ConfigException(name, value, "not a URI-reference (RFC 3986): " + e.getReason()
                    + "; e.g. /outbox/orders or https://orders.example.com/outbox");
            }
        }

        @Override
        public String toString() {
            return "empty, or a URI-reference";
        }
    }

    static final class TableNameValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            try {
                Identifiers.split((String) value);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(name, value, e.getMessage());
            }
        }

        @Override
        public String toString() {
            return "table or schema.table";
        }
    }

    static final class ColumnValidator implements ConfigDef.Validator {
        private final boolean emptyAllowed;

        ColumnValidator(boolean emptyAllowed) {
            this.emptyAllowed = emptyAllowed;
        }

        @Override
        public void ensureValid(String name, Object value) {
            String v = (String) value;
            if (v != null && v.isEmpty() && emptyAllowed) {
                return;
            }
            if (v == null || v.isEmpty()) {
                throw new ConfigException(name, value, "name the table's column for this field");
            }
            if (v.indexOf('\0') >= 0) {
                throw new ConfigException(name, value, "a column name cannot contain NUL");
            }
            if (v.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 63) {
                throw new ConfigException(name, value, "PostgreSQL keeps only the first 63 bytes of a column name");
            }
            if (OutboxColumns.STATE_COLUMNS.contains(v)) {
                throw new ConfigException(name, value, v + " is one of the relay's own state columns "
                    + OutboxColumns.STATE_COLUMNS + ", which an event field cannot share");
            }
        }

        @Override
        public String toString() {
            return emptyAllowed ? "empty (no such column), or a column name" : "column name";
        }
    }

    static final class ChannelValidator implements ConfigDef.Validator {
        private static final Pattern CHANNEL = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
        private final boolean emptyAllowed;

        ChannelValidator(boolean emptyAllowed) {
            this.emptyAllowed = emptyAllowed;
        }

        @Override
        public void ensureValid(String name, Object value) {
            String v = (String) value;
            if (v != null && v.isEmpty() && emptyAllowed) {
                return;
            }
            if (v == null || !CHANNEL.matcher(v).matches()) {
                throw new ConfigException(name, value,
                    "a NOTIFY channel is a plain identifier: a letter or '_', then letters, digits or '_'");
            }
        }

        @Override
        public String toString() {
            return emptyAllowed ? "empty, or a channel identifier" : "channel identifier";
        }
    }
}
