package io.outboxrelay.mentions;

import io.outboxrelay.mentions.MentionStore.OwedRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one batch of unrouted messages turns into, before any write: per message either routing
 * decisions (grammar, then policy), nothing to route (mark it at once), or a per-message fault (leave
 * it unrouted). Also collects the owed rows, written in one statement before any record is produced.
 *
 * @param routed messages with at least one routed member, in batch order
 * @param nothingToRoute messages that mention no routable member
 * @param faults messages whose blocks could not be read
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
            List<RoutedMention> mentions;
            try {
                List<String> handles = MentionGrammar.handles(msg.blocksJson());
                mentions = handles.isEmpty() ? List.of() : MentionPolicy.route(handles,
                    membersByChannel.getOrDefault(msg.channelId(), List.of()),
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
}
