package io.outboxrelay.mentions;

import io.outboxrelay.mentions.MentionStore.OwedRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one batch of unrouted messages turns into, before any write: per message either routing
 * decisions (grammar, then policy), nothing to route (mark it at once), or a per-message fault (leave
 * it unrouted: its blocks are not JSON, or a text of it or of its channel's agent members has a byte that is no
 * character of the database's encoding). Also collects the owed rows, written in one statement before any record is produced.
 *
 * @param routed messages with at least one routed member, in batch order
 * @param nothingToRoute messages that mention no routable member
 * @param faults messages whose blocks, or whose or their channel members' texts, could not be read
 * @param owed the owed rows of every {@link Arm#OWED} decision in the batch
 */
record MentionBatchPlan(List<Routed> routed, List<MentionOffsets.Named> nothingToRoute, List<Fault> faults, List<OwedRow> owed) {

    /** A message and its routing decisions. */
    record Routed(UnroutedMessage message, List<RoutedMention> mentions) {
    }

    /** A message left unrouted, and why (never its content). */
    record Fault(UnroutedMessage message, String reason) {
    }

    static MentionBatchPlan of(List<UnroutedMessage> batch, Map<String, List<ChannelMember>> membersByChannel) {
        List<Routed> routed = new ArrayList<>();
        List<MentionOffsets.Named> nothing = new ArrayList<>();
        List<Fault> faults = new ArrayList<>();
        List<OwedRow> owed = new ArrayList<>();
        for (UnroutedMessage msg : batch) {
            List<ChannelMember> members = membersByChannel.getOrDefault(msg.channelId(), List.of());
            String unreadable = msg.unreadable() != null ? msg.unreadable() : unreadable(members);
            if (unreadable != null) {
                faults.add(new Fault(msg, unreadable));
                continue;
            }
            List<RoutedMention> mentions;
            try {
                List<String> handles = MentionGrammar.handles(msg.blocksJson());
                mentions = handles.isEmpty() ? List.of() : MentionPolicy.route(handles, members,
                    msg.channelMandatory(), msg.channelId(), msg.authorId());
            } catch (MalformedBlocksException e) {
                faults.add(new Fault(msg, e.getMessage()));
                continue;
            } catch (RuntimeException e) {
                faults.add(new Fault(msg, "routing failed: " + e));
                continue;
            }
            if (mentions.isEmpty()) {
                nothing.add(msg.named());
                continue;
            }
            routed.add(new Routed(msg, mentions));
            for (RoutedMention m : mentions) {
                if (m.arm() == Arm.OWED) {
                    owed.add(new OwedRow(m.member().accountId(), msg.id()));
                }
            }
        }
        return new MentionBatchPlan(List.copyOf(routed), List.copyOf(nothing), List.copyOf(faults), List.copyOf(owed));
    }

    /**
     * Why the channel's members cannot be routed to: one of them has a text that could not be read (its stand-in
     * could match a handle it does not have, or name an account that does not exist), or null.
     */
    private static String unreadable(List<ChannelMember> members) {
        for (ChannelMember m : members) {
            if (m.unreadable() != null) {
                return "an agent member of the channel cannot be read (" + m.unreadable() + ")";
            }
        }
        return null;
    }
}
