package io.outboxrelay.mentions;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The agent members a batch's routing can reach, the only ones a pass loads: every agent member of a channel where
 * a message pings them all ({@code @all}, {@code @channel}, {@code @agents}), else those whose handle a message
 * there mentions. A batch whose messages mention one agent each in channels of 10,000 agents loads those agents,
 * not 10,000 a channel.
 *
 * @param wholeChannels    channels whose every agent member is wanted
 * @param handlesByChannel the other channels, each with the handles its messages mention, lower-cased
 */
record WantedMembers(Set<String> wholeChannels, Map<String, Set<String>> handlesByChannel) {

    WantedMembers {
        wholeChannels = Set.copyOf(wholeChannels);
        handlesByChannel = Map.copyOf(handlesByChannel);
    }

    /** Every agent member of each of {@code channels}. */
    static WantedMembers everyAgentOf(Collection<String> channels) {
        return new WantedMembers(Set.copyOf(channels), Map.of());
    }

    /** The members {@code handles}, as {@link MentionGrammar#handles} returns them, of messages in each channel reach. */
    static WantedMembers of(Map<String, List<List<String>>> handlesOfMessagesByChannel) {
        Set<String> whole = new TreeSet<>();
        Map<String, Set<String>> byChannel = new TreeMap<>();
        handlesOfMessagesByChannel.forEach((channel, messages) -> {
            for (List<String> handles : messages) {
                if (handles.stream().anyMatch(MentionGrammar::isReservedPing)) {
                    whole.add(channel);
                } else {
                    handles.forEach(h -> byChannel.computeIfAbsent(channel, k -> new TreeSet<>())
                        .add(h.toLowerCase(Locale.ROOT)));
                }
            }
        });
        byChannel.keySet().removeAll(whole);
        return new WantedMembers(whole, byChannel);
    }

    /** Every channel named, whole or by handles. */
    Set<String> channels() {
        Set<String> all = new TreeSet<>(wholeChannels);
        all.addAll(handlesByChannel.keySet());
        return all;
    }

    boolean isEmpty() {
        return wholeChannels.isEmpty() && handlesByChannel.isEmpty();
    }
}
