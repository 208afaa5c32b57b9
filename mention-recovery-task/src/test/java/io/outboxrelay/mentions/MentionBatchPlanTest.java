package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Where a batch's plan stops when its records would pass the cap, and what it still covers. */
class MentionBatchPlanTest {
    private static final List<ChannelMember> THREE_AGENTS = List.of(
        new ChannelMember("a-1", "one", true, true, "home", false),
        new ChannelMember("a-2", "two", true, true, "home", false),
        new ChannelMember("a-3", "three", true, true, "home", false));

    private static UnroutedMessage message(long seq, String blocks) {
        return new UnroutedMessage("m" + seq, seq, "u-1", "ch", false, blocks);
    }

    private static String text(String text) {
        return "[{\"type\":\"text\",\"text\":\"" + text + "\"}]";
    }

    /**
     * The members a batch asks for: a ping of all in any case takes its channel whole; other handles lower-cased by
     * channel; messages that cannot be read, that mention no one, that are known faults or that the read deferred ask
     * for nothing.
     */
    @Test
    void asksForTheMembersItsReadableMentionsCanReach() {
        UnroutedMessage inOps = new UnroutedMessage("m2", 2, "u-1", "ops", false, text("@Bob and @ALL"));
        UnroutedMessage known = new UnroutedMessage("m6", 6, "u-1", "known", false, text("@eve"));
        UnroutedMessage deferred = new UnroutedMessage("m7", 7, "u-1", "later", false, null, null, true);
        List<UnroutedMessage> batch = List.of(message(1, text("@Ada @ada. @Bob-2")), inOps, message(3, "not json"),
            message(4, text("no one")), new UnroutedMessage("m5", 5, "u-1", "odd", false, text("@x"), "unreadable", false),
            known, deferred);

        List<MentionBatchPlan.Parsed> parsed = MentionBatchPlan.parse(batch);
        WantedMembers wanted = MentionBatchPlan.wanted(parsed, Map.of(known.named(), "refused before"));

        assertThat(parsed).as("up to the deferred one").hasSize(6);
        assertThat(wanted.wholeChannels()).containsExactly("ops");
        assertThat(wanted.handlesByChannel()).isEqualTo(Map.of("ch", Set.of("ada", "bob-2")));
        assertThat(wanted.channels()).containsExactlyInAnyOrder("ch", "ops");
    }

    @Test
    void stopsBeforeTheMessageWhoseRecordsWouldPassTheCapAndCoversWhatCameBefore() {
        List<UnroutedMessage> batch = new ArrayList<>(List.of(
            message(1, text("@all")),      // 3 records
            message(2, text("no one")),    // nothing to route
            message(3, "not json"),        // a fault
            message(4, text("@one")),      // 1 record: 4 in all
            message(5, text("@all")),      // 3 more would make 7
            message(6, text("no one"))));

        MentionBatchPlan plan = MentionBatchPlan.of(batch, Map.of("ch", THREE_AGENTS), 5);

        assertThat(plan.planned()).isEqualTo(4);
        assertThat(plan.routed()).extracting(r -> r.message().seq()).containsExactly(1L, 4L);
        assertThat(plan.nothingToRoute()).extracting(MentionOffsets.Named::seq).containsExactly(2L);
        assertThat(plan.faults()).extracting(f -> f.message().seq()).containsExactly(3L);
    }

    /**
     * author_id is an unbounded text copied into every record: a producer refusing the record failed the task, and
     * each restart read that message first again. Now a per-message fault; the scan goes on.
     */
    @Test
    void aMessageWhoseRecordWouldPassTheRecordLimitIsAFaultAndTheOthersAreRouted() {
        UnroutedMessage huge = new UnroutedMessage("m1", 1, "u".repeat(1_100_000), "ch", false, text("@one"));
        UnroutedMessage quoted = new UnroutedMessage("m2", 2, "\"".repeat(600_000), "ch", false, text("@one"));
        UnroutedMessage ordinary = new UnroutedMessage("m3", 3, "u".repeat(900_000), "ch", false, text("@one"));
        // the id travels in the record and, escaped twice, in the source offset Connect writes
        UnroutedMessage longId = new UnroutedMessage("m".repeat(400_000), 4, "u-1", "ch", false, text("@one"));

        MentionBatchPlan plan = MentionBatchPlan.of(List.of(huge, quoted, ordinary, longId), Map.of("ch", THREE_AGENTS),
            10);

        assertThat(plan.faults()).extracting(f -> f.message().seq()).containsExactly(1L, 2L, 4L);
        assertThat(plan.faults().get(0).reason()).contains("author_id 1100000 characters").contains("a-1");
        assertThat(plan.routed()).extracting(r -> r.message().seq()).containsExactly(3L);
        assertThat(plan.owed()).as("nothing owed for a message left unrouted").allSatisfy(o ->
            assertThat(o.messageId()).isEqualTo("m3"));
    }

    @Test
    void aFirstMessageAboveTheCapIsPlannedWholeAlone() {
        MentionBatchPlan plan = MentionBatchPlan.of(List.of(message(1, text("@all")), message(2, text("@one"))),
            Map.of("ch", THREE_AGENTS), 2);

        assertThat(plan.planned()).isEqualTo(1);
        assertThat(plan.routed()).singleElement().satisfies(r -> assertThat(r.mentions()).hasSize(3));

        // after a first message above the cap, even one with nothing to route waits for the next batch
        MentionBatchPlan nothingAfter = MentionBatchPlan.of(List.of(message(1, text("@all")), message(2, text("hi"))),
            Map.of("ch", THREE_AGENTS), 2);
        assertThat(nothingAfter.planned()).isEqualTo(1);
        assertThat(nothingAfter.nothingToRoute()).isEmpty();
    }

    @Test
    void withoutAnyCapReachedTheWholeBatchIsPlanned() {
        MentionBatchPlan plan = MentionBatchPlan.of(List.of(message(1, text("@all")), message(2, text("@one"))),
            Map.of("ch", THREE_AGENTS), 4);

        assertThat(plan.planned()).isEqualTo(2);
        assertThat(plan.routed()).hasSize(2);
    }
}
