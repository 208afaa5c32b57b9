package io.outboxrelay.mentions;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The one mention routing function: from the handles a message mentions and its channel's members to
 * one {@link Arm} per mentioned agent member. Pure (no I/O), so a Java live path could share it and tests can
 * pin the whole table. The chat server's live path is Go code of its own, which this follows arm for arm; the
 * two are kept in step by hand, not by shared code.
 *
 * <ul>
 *   <li>Only agent accounts that are members of the channel are routed; other handles are ignored. A handle
 *       matches in any case, so it may match several accounts (handles are unique only as stored): each is
 *       routed.</li>
 *   <li>{@code @all}, {@code @channel} and {@code @agents} expand to every agent member.</li>
 *   <li>The author is never routed; each member is routed once, in first-mention order.</li>
 *   <li>Live member: {@link Arm#STEER}. Offline member outside the sweep set (not subscribed, the
 *       channel is not its home and not mandatory): {@link Arm#OWED}. Offline member in the sweep set:
 *       {@link Arm#WAKE}.</li>
 * </ul>
 */
public final class MentionPolicy {
    private MentionPolicy() {
    }

    /**
     * @param mentionedHandles handles as {@link MentionGrammar#handles} returns them (any case accepted)
     * @param members the channel's members; non-agents are ignored, order decides the reserved-ping order
     * @param channelMandatory {@code channels.mandatory_subscription} of the message's channel
     * @param channelId the message's channel
     * @param authorId the message's author, never routed
     */
    public static List<RoutedMention> route(Collection<String> mentionedHandles, List<ChannelMember> members,
                                            boolean channelMandatory, String channelId, String authorId) {
        // handles are unique as stored, case and all, so one mention may match several accounts: each is routed
        Map<String, List<ChannelMember>> agentsByHandle = new HashMap<>();
        List<ChannelMember> agents = new ArrayList<>();
        for (ChannelMember m : members) {
            if (m.agent() && !m.accountId().equals(authorId)) {
                agents.add(m);
                agentsByHandle.computeIfAbsent(m.handle().toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(m);
            }
        }
        Map<String, ChannelMember> chosen = new LinkedHashMap<>(); // by account id: each member once
        for (String handle : mentionedHandles) {
            if (MentionGrammar.isReservedPing(handle)) {
                agents.forEach(m -> chosen.putIfAbsent(m.accountId(), m));
            } else {
                agentsByHandle.getOrDefault(handle.toLowerCase(Locale.ROOT), List.of())
                    .forEach(m -> chosen.putIfAbsent(m.accountId(), m));
            }
        }
        List<RoutedMention> out = new ArrayList<>(chosen.size());
        for (ChannelMember m : chosen.values()) {
            out.add(new RoutedMention(m, arm(m, channelMandatory, channelId)));
        }
        return out;
    }

    /** The arm for one agent member of the channel. */
    public static Arm arm(ChannelMember member, boolean channelMandatory, String channelId) {
        if (member.live()) {
            return Arm.STEER;
        }
        return inSweepSet(member, channelMandatory, channelId) ? Arm.WAKE : Arm.OWED;
    }

    /**
     * The server's delivery sweep covers the member in this channel: it is subscribed, or the channel
     * is its home, or the channel is mandatory.
     */
    public static boolean inSweepSet(ChannelMember member, boolean channelMandatory, String channelId) {
        return member.subscribed() || channelMandatory || Objects.equals(channelId, member.homeChannelId());
    }
}
