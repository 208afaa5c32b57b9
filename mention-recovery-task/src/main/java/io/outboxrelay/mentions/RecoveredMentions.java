package io.outboxrelay.mentions;

import java.util.Date;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;

/**
 * The shape of a recovered-mention record: key = the agent account id (string), value = a
 * {@code RecoveredMention} struct, timestamp = {@code recovered_at}. Source offsets name the messages
 * whose records were handed to Connect and which are not marked yet ({@link MentionOffsets}), or under
 * {@code errors.tolerance=all} are the informational {@code {"seq": n}}. Neither is a position: the scan
 * never starts from one, because a stored position is exactly the cursor that loses late-committing
 * messages.
 */
public final class RecoveredMentions {
    public static final String VALUE_SCHEMA_NAME = "io.outboxrelay.mentions.RecoveredMention";

    public static final Schema KEY_SCHEMA = Schema.STRING_SCHEMA;

    public static final Schema VALUE_SCHEMA = SchemaBuilder.struct()
        .name(VALUE_SCHEMA_NAME)
        .field("message_id", Schema.STRING_SCHEMA)
        .field("message_seq", Schema.INT64_SCHEMA)
        .field("channel_id", Schema.STRING_SCHEMA)
        .field("author_id", Schema.STRING_SCHEMA)
        .field("agent_account_id", Schema.STRING_SCHEMA)
        .field("agent_handle", Schema.STRING_SCHEMA)
        .field("action", Schema.STRING_SCHEMA)
        .field("recovered_at", Timestamp.SCHEMA)
        .build();

    /** The one source partition of the task. */
    public static final Map<String, String> SOURCE_PARTITION = Map.of("mentions", "messages");

    private RecoveredMentions() {
    }

    /** The value struct for one routing decision. */
    public static Struct value(UnroutedMessage message, RoutedMention mention, long recoveredAtUnixMs) {
        return new Struct(VALUE_SCHEMA)
            .put("message_id", message.id())
            .put("message_seq", message.seq())
            .put("channel_id", message.channelId())
            .put("author_id", message.authorId())
            .put("agent_account_id", mention.member().accountId())
            .put("agent_handle", mention.member().handle())
            .put("action", mention.arm().name())
            .put("recovered_at", new Date(recoveredAtUnixMs));
    }

    static MentionRecord record(String topic, UnroutedMessage message, RoutedMention mention,
                                long recoveredAtUnixMs, MentionAckTracker.PendingMessage pending,
                                Map<String, ?> sourceOffset) {
        return new MentionRecord(SOURCE_PARTITION, sourceOffset, topic,
            KEY_SCHEMA, mention.member().accountId(), VALUE_SCHEMA, value(message, mention, recoveredAtUnixMs),
            recoveredAtUnixMs, pending);
    }
}
