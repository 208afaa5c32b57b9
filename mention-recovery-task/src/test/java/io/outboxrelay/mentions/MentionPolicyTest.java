package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The one routing policy: which agent members a message reaches, and through which arm. */
class MentionPolicyTest {
    private static final String CHANNEL = "ch-1";
    private static final String AUTHOR = "u-author";

    private static ChannelMember agent(String id, String handle) {
        return new ChannelMember(id, handle, true, false, "elsewhere", false);
    }

    private static List<String> ids(List<RoutedMention> routed) {
        return routed.stream().map(r -> r.member().accountId()).toList();
    }

    @ParameterizedTest(name = "live={0} subscribed={1} home={2} mandatory={3} -> {4}")
    @CsvSource({
        // live wins regardless of the sweep set
        "true,  false, false, false, STEER",
        "true,  true,  true,  true,  STEER",
        "true,  true,  false, false, STEER",
        // offline, in the sweep set: the server's cursor sweep is the backstop
        "false, true,  false, false, WAKE",
        "false, false, true,  false, WAKE",
        "false, false, false, true,  WAKE",
        "false, true,  true,  true,  WAKE",
        // offline, outside the sweep set: the mention-gap population
        "false, false, false, false, OWED"})
    void choosesTheArmFromLivenessAndTheSweepSet(boolean live, boolean subscribed, boolean home, boolean mandatory,
                                                 Arm expected) {
        ChannelMember member = new ChannelMember("a-1", "ada", true, subscribed, home ? CHANNEL : "other", live);

        List<RoutedMention> routed = MentionPolicy.route(List.of("ada"), List.of(member), mandatory, CHANNEL, AUTHOR);

        assertThat(routed).containsExactly(new RoutedMention(member, expected));
    }

    @Test
    void treatsAMemberWithoutAHomeChannelAsNotHome() {
        ChannelMember member = new ChannelMember("a-1", "ada", true, false, null, false);

        assertThat(MentionPolicy.route(List.of("ada"), List.of(member), false, CHANNEL, AUTHOR))
            .extracting(RoutedMention::arm).containsExactly(Arm.OWED);
    }

    @Test
    void neverRoutesTheAuthor() {
        ChannelMember author = agent(AUTHOR, "self");
        ChannelMember other = agent("a-2", "bob");

        List<RoutedMention> routed = MentionPolicy.route(List.of("self", "bob"), List.of(author, other), false, CHANNEL, AUTHOR);

        assertThat(ids(routed)).containsExactly("a-2");
    }

    @Test
    void expandsEachReservedPingToEveryAgentMemberButTheAuthor() {
        List<ChannelMember> members = List.of(agent("a-1", "ada"), agent("a-2", "bob"), agent(AUTHOR, "self"),
            new ChannelMember("h-1", "hugo", false, true, CHANNEL, true));

        for (String ping : List.of("all", "channel", "agents")) {
            assertThat(ids(MentionPolicy.route(List.of(ping), members, false, CHANNEL, AUTHOR)))
                .as(ping).containsExactly("a-1", "a-2");
        }
    }

    @Test
    void ignoresHandlesThatAreNotAgentMembersOfTheChannel() {
        List<ChannelMember> members = List.of(agent("a-1", "ada"));

        assertThat(MentionPolicy.route(List.of("stranger", "ada"), members, false, CHANNEL, AUTHOR))
            .extracting(r -> r.member().accountId()).containsExactly("a-1");
        assertThat(MentionPolicy.route(List.of("stranger"), members, false, CHANNEL, AUTHOR)).isEmpty();
    }

    /**
     * accounts.handle is unique as stored, so "Bot" and "bot" can be two agents; matching is case-insensitive
     * (the contract), so "@BOT" mentions both. Before, the first handle in the members' order took the mention and
     * the other account's was lost.
     */
    @Test
    void aHandleThatMatchesSeveralAccountsInAnyCaseRoutesEachOfThem() {
        List<ChannelMember> members = List.of(agent("a-1", "Bot"), agent("a-2", "bot"), agent("a-3", "ada"));

        assertThat(ids(MentionPolicy.route(List.of("BOT"), members, false, CHANNEL, AUTHOR)))
            .containsExactly("a-1", "a-2");
        assertThat(ids(MentionPolicy.route(List.of("bot", "Bot"), members, false, CHANNEL, AUTHOR)))
            .containsExactly("a-1", "a-2");
    }

    @Test
    void ignoresHumanAccounts() {
        ChannelMember human = new ChannelMember("h-1", "hugo", false, false, "other", false);

        assertThat(MentionPolicy.route(List.of("hugo", "all"), List.of(human), false, CHANNEL, AUTHOR)).isEmpty();
    }

    @Test
    void routesEachMemberOnceInFirstMentionOrder() {
        List<ChannelMember> members = List.of(agent("a-1", "ada"), agent("a-2", "bob"), agent("a-3", "cy"));

        List<RoutedMention> routed = MentionPolicy.route(List.of("bob", "Ada", "ada", "all", "bob"), members, false,
            CHANNEL, AUTHOR);

        assertThat(ids(routed)).containsExactly("a-2", "a-1", "a-3");
    }

    @Test
    void matchesHandlesWhateverTheirStoredCase() {
        ChannelMember member = agent("a-1", "Ada.Bot");

        assertThat(ids(MentionPolicy.route(List.of("ada.bot"), List.of(member), false, CHANNEL, AUTHOR)))
            .containsExactly("a-1");
    }

    @Test
    void routesNothingWhenNothingIsMentioned() {
        assertThat(MentionPolicy.route(List.of(), List.of(agent("a-1", "ada")), true, CHANNEL, AUTHOR)).isEmpty();
    }
}
