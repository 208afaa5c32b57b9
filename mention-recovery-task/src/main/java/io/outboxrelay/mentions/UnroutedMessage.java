package io.outboxrelay.mentions;

/**
 * A committed message whose mention pass never completed ({@code mentions_routed_at IS NULL}), with
 * its channel resolved through {@code topics.channel_id}.
 *
 * @param blocksJson the {@code blocks} column as JSON text; private content, never logged. Null when deferred (or
 *                   when the column holds NULL, which makes the message a fault)
 * @param unreadable null, or why the message cannot be routed as read: a text of the row has no Unicode text to read
 *                   (a byte that is no character of the database's encoding; the texts read are then stand-ins), or
 *                   its blocks are too large to read at all (then null). The message is left unrouted
 * @param deferred   whether the batch read left the blocks in the database: the messages before it in the batch
 *                   brought its budget of bytes, and it is read again, whole, with the next batch
 */
public record UnroutedMessage(String id, long seq, String authorId, String channelId, boolean channelMandatory,
                              String blocksJson, String unreadable, boolean deferred) {

    /** A message read whole, whose texts were all read. */
    public UnroutedMessage(String id, long seq, String authorId, String channelId, boolean channelMandatory,
                           String blocksJson) {
        this(id, seq, authorId, channelId, channelMandatory, blocksJson, null, false);
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
