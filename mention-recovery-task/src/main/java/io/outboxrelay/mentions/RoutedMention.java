package io.outboxrelay.mentions;

/** One routing decision: the mentioned agent member and the arm chosen for it. */
public record RoutedMention(ChannelMember member, Arm arm) {
}
