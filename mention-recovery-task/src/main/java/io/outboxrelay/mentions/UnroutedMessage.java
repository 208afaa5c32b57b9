package io.outboxrelay.mentions;

/**
 * A committed message whose mention pass never completed ({@code mentions_routed_at IS NULL}), with
 * its channel resolved through {@code topics.channel_id}.
 *
 * @param blocksJson the {@code blocks} column as JSON text; private content, never logged. Null when the batch read
 *                   left it in the database, its budget of bytes spent by the messages before ({@link #deferred()})
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

    /**
     * Whether the batch read left this message's blocks in the database (the column is NOT NULL): the messages before
     * it brought the batch's budget of bytes, and it is read again with the next batch.
     */
    boolean deferred() {
        return blocksJson == null;
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
