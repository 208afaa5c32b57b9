package io.outboxrelay.mentions;

/**
 * A committed message whose mention pass never completed ({@code mentions_routed_at IS NULL}), with
 * its channel resolved through {@code topics.channel_id}.
 *
 * @param blocksJson the {@code blocks} column as JSON text; private content, never logged
 * @param unreadable null, or why a text of the row has no Unicode text to read (a byte that is no character of the
 *                   database's encoding; the texts read are then stand-ins, and the message is left unrouted)
 */
public record UnroutedMessage(String id, long seq, String authorId, String channelId, boolean channelMandatory,
                              String blocksJson, String unreadable) {

    /** A message whose texts were all read. */
    public UnroutedMessage(String id, long seq, String authorId, String channelId, boolean channelMandatory,
                           String blocksJson) {
        this(id, seq, authorId, channelId, channelMandatory, blocksJson, null);
    }

    /** The message by its seq and id, as a mark matches it. */
    MentionOffsets.Named named() {
        return new MentionOffsets.Named(seq, id);
    }

    @Override
    public String toString() {
        return "UnroutedMessage[id=" + id + ", seq=" + seq + ", channel=" + channelId + "]";
    }
}
