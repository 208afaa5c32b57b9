package io.outboxrelay.mentions;

import io.outboxrelay.common.Json;
import io.outboxrelay.mentions.MentionStore.OwedRow;
import java.util.ArrayList;
import java.util.HashMap;
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
 * @param planned how many messages of the batch, from its first, the plan covers: all of them unless their records
 *                would have passed the cap {@link #of} was given (the others are read again with the next batch)
 */
record MentionBatchPlan(List<Routed> routed, List<MentionOffsets.Named> nothingToRoute, List<Fault> faults, List<OwedRow> owed,
                        int planned) {

    /** A message and its routing decisions. */
    record Routed(UnroutedMessage message, List<RoutedMention> mentions) {
    }

    /** A message left unrouted, and why (never its content). */
    record Fault(UnroutedMessage message, String reason) {
    }

    /**
     * The most the names of a batch's routed messages may take in the source offset of its last record (Connect
     * writes that offset to its offsets topic as one record, under the producer's 1 MiB; an exactly-once
     * transaction that could not would fail the task, and every restart would plan the same batch).
     */
    static final long MAX_NAMED_BYTES = 500_000;

    /**
     * The plan of the batch's messages in order, up to the first whose records would take the batch's past
     * {@code maxRecords}, or whose name the offset would take past {@link #MAX_NAMED_BYTES} (one message at least,
     * whatever its count: a message's records go out together), or the first the read
     * {@link UnroutedMessage#deferred() deferred}.
     */
    static MentionBatchPlan of(List<UnroutedMessage> batch, Map<String, List<ChannelMember>> membersByChannel,
                               int maxRecords) {
        return of(batch, membersByChannel, maxRecords, Map.of());
    }

    /** The same, with messages known to be faults, and why: not routed again. */
    static MentionBatchPlan of(List<UnroutedMessage> batch, Map<String, List<ChannelMember>> membersByChannel,
                               int maxRecords, Map<MentionOffsets.Named, String> knownFaults) {
        return plan(parse(batch), membersByChannel, maxRecords, knownFaults);
    }

    /**
     * A message of a batch read, with the handles its blocks mention, or why they cannot be read ({@code handles}
     * then empty).
     */
    record Parsed(UnroutedMessage message, List<String> handles, String fault) {
    }

    /**
     * The batch's messages up to the first the read {@link UnroutedMessage#deferred() deferred} (the first message
     * always counts), each parsed once: {@link #wanted} asks for the members they can reach, {@link #plan} routes them.
     */
    static List<Parsed> parse(List<UnroutedMessage> batch) {
        List<Parsed> out = new ArrayList<>(batch.size());
        for (UnroutedMessage msg : batch) {
            if (msg.deferred() && !out.isEmpty()) {
                break; // the batch read's budget of bytes ends here: this message and the rest come with the next
            }
            if (msg.unreadable() != null) {
                out.add(new Parsed(msg, List.of(), msg.unreadable()));
                continue;
            }
            try {
                out.add(new Parsed(msg, MentionGrammar.handles(msg.blocksJson()), null));
            } catch (MalformedBlocksException e) {
                out.add(new Parsed(msg, List.of(), e.getMessage()));
            } catch (RuntimeException e) {
                out.add(new Parsed(msg, List.of(), "routing failed: " + e));
            }
        }
        return out;
    }

    /** The agent members the messages' mentions can reach, known faults left out. */
    static WantedMembers wanted(List<Parsed> parsed, Map<MentionOffsets.Named, String> knownFaults) {
        Map<String, List<List<String>>> byChannel = new HashMap<>();
        for (Parsed p : parsed) {
            if (p.fault() == null && !p.handles().isEmpty() && !knownFaults.containsKey(p.message().named())) {
                byChannel.computeIfAbsent(p.message().channelId(), k -> new ArrayList<>()).add(p.handles());
            }
        }
        return WantedMembers.of(byChannel);
    }

    /**
     * The plan of the parsed messages in order, up to the first whose records would take the batch's past
     * {@code maxRecords}, or whose name the offset would take past {@link #MAX_NAMED_BYTES} (one message at least,
     * whatever its count: a message's records go out together).
     */
    static MentionBatchPlan plan(List<Parsed> parsed, Map<String, List<ChannelMember>> membersByChannel,
                                 int maxRecords, Map<MentionOffsets.Named, String> knownFaults) {
        List<Routed> routed = new ArrayList<>();
        List<MentionOffsets.Named> nothing = new ArrayList<>();
        List<Fault> faults = new ArrayList<>();
        List<OwedRow> owed = new ArrayList<>();
        int records = 0;
        long namedBytes = 0;
        int planned = 0;
        for (Parsed p : parsed) {
            UnroutedMessage msg = p.message();
            String known = knownFaults.get(msg.named());
            Decision decision = known != null ? new Decision(List.of(), known)
                : decide(p, membersByChannel.getOrDefault(msg.channelId(), List.of()));
            String fault = decision.fault();
            List<RoutedMention> mentions = decision.mentions();
            long named = mentions.isEmpty() ? 0 : namedBytes(msg);
            if (records > 0 && records + mentions.size() > maxRecords || planned > 0 && namedBytes + named > MAX_NAMED_BYTES) {
                break;
            }
            planned++;
            records += mentions.size();
            namedBytes += named;
            if (fault != null) {
                faults.add(new Fault(msg, fault));
            } else if (mentions.isEmpty()) {
                nothing.add(msg.named());
            } else {
                routed.add(new Routed(msg, mentions));
                for (RoutedMention m : mentions) {
                    if (m.arm() == Arm.OWED) {
                        owed.add(new OwedRow(m.member().accountId(), msg.id()));
                    }
                }
            }
        }
        return new MentionBatchPlan(List.copyOf(routed), List.copyOf(nothing), List.copyOf(faults), List.copyOf(owed),
            planned);
    }

    /** The routing decisions of one message, or (none, with the reason) a fault. */
    private record Decision(List<RoutedMention> mentions, String fault) {
    }

    private static Decision decide(Parsed parsed, List<ChannelMember> members) {
        if (parsed.fault() != null) {
            return new Decision(List.of(), parsed.fault());
        }
        UnroutedMessage msg = parsed.message();
        try {
            List<RoutedMention> mentions = parsed.handles().isEmpty() ? List.of() : MentionPolicy.route(parsed.handles(),
                members, msg.channelMandatory(), msg.channelId(), msg.authorId());
            String fault = unreadable(mentions, msg.channelId());
            if (fault == null) {
                fault = tooLarge(msg, mentions);
            }
            return fault == null ? new Decision(mentions, null) : new Decision(List.of(), fault);
        } catch (RuntimeException e) {
            return new Decision(List.of(), "routing failed: " + e);
        }
    }

    /**
     * The most a recovered-mention record may take, its texts as a converter writes them: under the producer's
     * default {@code max.request.size} (1 MiB) with room for the schema JsonConverter adds.
     */
    static final int MAX_RECORD_BYTES = 1_000_000;

    /**
     * Why a record of the message would be too large to send (its texts are unbounded columns: a producer that
     * refused it would fail the task, and every restart would read the message first again), or null.
     */
    private static String tooLarge(UnroutedMessage msg, List<RoutedMention> mentions) {
        // the id once more, escaped twice, in the source offset Connect writes to its offsets topic (MentionOffsets)
        long fixed = 3 * Json.stringBytes(msg.id()) + Json.stringBytes(msg.channelId()) + Json.stringBytes(msg.authorId());
        for (RoutedMention m : mentions) {
            // the account id is both the key and a field
            long bytes = fixed + 2L * Json.stringBytes(m.member().accountId()) + Json.stringBytes(m.member().handle());
            if (bytes > MAX_RECORD_BYTES) {
                return "its record to agent " + cut(m.member().accountId()) + " would take over " + bytes + " bytes,"
                    + " more than the " + MAX_RECORD_BYTES + " a recovered-mention record may (author_id "
                    + msg.authorId().length() + " characters, message id " + msg.id().length() + ")";
            }
        }
        return null;
    }

    /** What naming a routed message takes in an offset: {@code [seq,"id"]} in a JSON string, so escaped twice. */
    static long namedBytes(UnroutedMessage msg) {
        return 2 * Json.stringBytes(msg.id()) + 24;
    }

    private static String cut(String s) {
        return s.length() <= 100 ? s : s.substring(0, 100) + "…";
    }

    /**
     * Why the message cannot be routed: the policy routes it to a member with a text that could not be read (a
     * stand-in id would owe a mention to an account that does not exist), or null. A handle that could not be read has
     * a character no handle of the grammar has, so only a reserved ping routes to its member.
     */
    private static String unreadable(List<RoutedMention> mentions, String channelId) {
        for (RoutedMention m : mentions) {
            if (m.member().unreadable() != null) {
                return "agent member " + m.member().accountId() + " of channel " + channelId + ", whom it mentions,"
                    + " cannot be read: " + m.member().unreadable();
            }
        }
        return null;
    }
}
