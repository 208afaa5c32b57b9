package io.outboxrelay.mentions;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * An in-memory {@link MentionStore} for unit tests: messages, members, owed rows and markers in maps,
 * with the same filters as the SQL (floor, cutoff, limit, NULL marker), a call log, and injectable
 * failures.
 */
final class FakeMentionStore implements MentionStore {
    /** A stored message; {@code routedAt} null = unrouted. */
    static final class Row {
        final UnroutedMessage message;
        final long atUnixMs;
        Long routedAt;

        Row(UnroutedMessage message, long atUnixMs) {
            this.message = message;
            this.atUnixMs = atUnixMs;
        }
    }

    final Map<String, Row> messages = new LinkedHashMap<>();
    final Map<String, List<ChannelMember>> members = new HashMap<>();
    final Set<OwedRow> owed = new LinkedHashSet<>();
    final List<String> calls = new ArrayList<>();
    final List<Long> readFloors = new ArrayList<>();
    final List<Long> readCutoffs = new ArrayList<>();
    final List<Integer> readLimits = new ArrayList<>();
    /** The channels of each agentMembers call, in call order. */
    final List<Set<String>> membersAskedFor = new ArrayList<>();
    /** How many members the agentMembers calls returned, all together. */
    int membersLoaded;
    /** The bytes of blocks a read brings before it defers the rest (JdbcMentionStore's budget). */
    long blocksBudget = Long.MAX_VALUE;
    /** The ids of each markNamed call, in call order. */
    final List<List<String>> markCalls = new ArrayList<>();
    SQLException failNextRead;
    SQLException failNextMark;
    /** While set, every markNamed call fails with it (a lasting outage or a missing grant). */
    SQLException failMarks;
    /** Message ids whose rows fail every write that holds them (a constraint, a trigger), with the error. */
    final Map<String, SQLException> failRowsOf = new HashMap<>();

    void addMessage(String id, long seq, long atUnixMs, String channelId, String authorId, String blocksJson) {
        messages.put(id, new Row(new UnroutedMessage(id, seq, authorId, channelId, false, blocksJson), atUnixMs));
    }

    void addAgent(String channelId, String accountId, String handle, boolean subscribed, boolean live) {
        members.computeIfAbsent(channelId, k -> new ArrayList<>())
            .add(new ChannelMember(accountId, handle, true, subscribed, "home-" + accountId, live));
    }

    Long routedAt(String messageId) {
        return messages.get(messageId).routedAt;
    }

    @Override
    public List<UnroutedMessage> readUnrouted(long afterSeq, long newestUnixMs, long liveSinceUnixMs, int limit)
        throws SQLException {
        calls.add("read");
        readFloors.add(afterSeq);
        readCutoffs.add(newestUnixMs);
        readLimits.add(limit);
        if (failNextRead != null) {
            SQLException e = failNextRead;
            failNextRead = null;
            throw e;
        }
        List<UnroutedMessage> read = messages.values().stream()
            .filter(r -> r.routedAt == null && r.message.seq() > afterSeq && r.atUnixMs <= newestUnixMs)
            .map(r -> r.message)
            .sorted((a, b) -> Long.compare(a.seq(), b.seq()))
            .limit(limit)
            .toList();
        // as ReadUnroutedBatch: a message that would take the batch's blocks past the budget comes without its own
        List<UnroutedMessage> out = new ArrayList<>();
        long bytes = 0;
        for (UnroutedMessage m : read) {
            bytes += m.blocksJson() == null ? 0 : m.blocksJson().getBytes(StandardCharsets.UTF_8).length;
            out.add(bytes <= blocksBudget || out.isEmpty() ? m : new UnroutedMessage(m.id(), m.seq(), m.authorId(),
                m.channelId(), m.channelMandatory(), null, null, true));
        }
        return out;
    }

    @Override
    public Map<String, List<ChannelMember>> agentMembers(WantedMembers wanted, long liveSinceUnixMs) {
        calls.add("members");
        Set<String> channels = wanted.channels();
        membersAskedFor.add(Set.copyOf(channels));
        Map<String, List<ChannelMember>> out = new HashMap<>();
        for (String id : channels) {
            Set<String> handles = wanted.handlesByChannel().get(id);
            List<ChannelMember> found = members.getOrDefault(id, List.of()).stream()
                .filter(m -> handles == null || !m.handle().matches("[A-Za-z0-9_.-]*")
                    || handles.contains(m.handle().toLowerCase(Locale.ROOT)))
                .toList();
            if (!found.isEmpty()) {
                out.put(id, found);
            }
        }
        membersLoaded += out.values().stream().mapToInt(List::size).sum();
        return out;
    }

    @Override
    public int recordOwed(List<OwedRow> rows, long recordedAtUnixMs) throws SQLException {
        calls.add("owed:" + rows.size());
        failRowsIfAsked(rows.stream().map(OwedRow::messageId).toList());
        int before = owed.size();
        owed.addAll(rows);
        return owed.size() - before;
    }

    /** As MarkNamedMentionsRouted: seq and id must both match. */
    @Override
    public int markNamed(Collection<MentionOffsets.Named> named, long routedAtUnixMs) throws SQLException {
        calls.add("markNamed:" + named.stream().map(n -> n.seq() + "/" + n.id()).collect(Collectors.joining(",")));
        markCalls.add(named.stream().map(MentionOffsets.Named::id).toList());
        failMarkIfAsked();
        failRowsIfAsked(named.stream().map(MentionOffsets.Named::id).toList());
        int n = 0;
        for (MentionOffsets.Named m : named) {
            Row row = messages.get(m.id());
            n += row != null && row.message.seq() == m.seq() ? mark(row, routedAtUnixMs) : 0;
        }
        return n;
    }

    private void failRowsIfAsked(List<String> messageIds) throws SQLException {
        for (String id : messageIds) {
            if (failRowsOf.containsKey(id)) {
                throw failRowsOf.get(id);
            }
        }
    }

    private void failMarkIfAsked() throws SQLException {
        if (failMarks != null) {
            throw failMarks;
        }
        if (failNextMark != null) {
            SQLException e = failNextMark;
            failNextMark = null;
            throw e;
        }
    }

    private static int mark(Row row, long routedAtUnixMs) {
        if (row != null && row.routedAt == null) {
            row.routedAt = routedAtUnixMs;
            return 1;
        }
        return 0;
    }
}
