package io.outboxrelay.mentions;

import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The database side of a recovery pass: read unrouted messages, load channel agent members, write
 * owed rows and set the marker. {@link JdbcMentionStore} is the real one; tests use fakes. Every
 * method is one statement; callers pass the times, so the store keeps no clock.
 */
public interface MentionStore {

    /**
     * Up to {@code limit} unrouted messages with {@code seq > afterSeq} and {@code at_unix_ms <= newestUnixMs},
     * ascending seq, skipping messages held by a live session. Past a budget of bytes of blocks, the messages come
     * {@link UnroutedMessage#deferred() deferred}, without them.
     *
     * @param afterSeq the pass-local seq floor, never persisted ({@link Long#MIN_VALUE} at a pass's start: a seq of 0
     *                 or below, inserted by hand or from a sequence that starts there, is read too)
     * @param newestUnixMs messages after this time are left out (a periodic pass: those younger than the minimum
     *                     age; {@link Long#MAX_VALUE} for all)
     * @param liveSinceUnixMs a session seen at or after this, and not ended, is live
     */
    List<UnroutedMessage> readUnrouted(long afterSeq, long newestUnixMs, long liveSinceUnixMs, int limit)
        throws SQLException;

    /**
     * The agent members {@code wanted} names, by channel, each with its live flag; absent channel = none. Of a
     * channel with handles, at least the members whose handle lower-cases to one of them (more may come: the
     * policy decides).
     */
    Map<String, List<ChannelMember>> agentMembers(WantedMembers wanted, long liveSinceUnixMs) throws SQLException;

    /** Every agent member of each of the given channels. */
    default Map<String, List<ChannelMember>> agentMembers(Collection<String> channelIds, long liveSinceUnixMs)
        throws SQLException {
        return agentMembers(WantedMembers.everyAgentOf(channelIds), liveSinceUnixMs);
    }

    /** Inserts the owed rows that do not exist yet; returns how many were new. */
    int recordOwed(List<OwedRow> rows, long recordedAtUnixMs) throws SQLException;

    /**
     * Sets {@code mentions_routed_at} on those of the messages (seq and id both matching) that are still NULL;
     * returns how many. The seq guards against a message deleted and inserted again under the same id while its
     * records were in flight, and against a messages table created again since a committed offset named them.
     */
    int markNamed(Collection<MentionOffsets.Named> messages, long routedAtUnixMs) throws SQLException;

    /** One {@code owed_mentions} row. */
    record OwedRow(String agentAccountId, String messageId) {
    }
}
