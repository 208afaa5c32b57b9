package io.outboxrelay.mentions;

import static io.outboxrelay.mentions.PostgresFixture.exec;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.Charset;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A pass loads only the agent members its mentions can reach ({@link WantedMembers}, {@code LoadAgentMembers}); this
 * proves that it routes every message exactly as with every member of the channels loaded: the same agents in the
 * same order, the same arms, the same faults. Handles that lower-case in surprising ways (the Kelvin sign, dotted and
 * dotless I, sharp s, full-width letters, combining marks, emoji, spaces), pings of all in any case, authors who
 * mention themselves, texts that cannot be read, in UTF8 (also with a case-insensitive collation on the handle and on
 * the channel), SQL_ASCII and WIN1252 databases.
 */
class MentionMemberLoadIT {
    private static final long NOW = 1_800_000_000_000L;
    private static final long LIVE_SINCE = NOW - 60_000;
    private static PostgresFixture pg;

    @BeforeAll
    static void start() {
        pg = new PostgresFixture();
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    static final List<String> HANDLES = List.of("Ada", "ADA2", "bob.smith-2", "bob.", "b-", "\u212Aate", "kate",
        "\u0130nes", "ines", "\u0131nes", "Stra\u00dfe", "strasse", "bob smith", "x\n", "\uFF22\uFF2F\uFF22", "Zo\u00eb",
        "zoe", "_u", "9lives", "A\u0301", "\u00e9lan", "O'Neil", "tab\t", "emo\uD83D\uDE00", "\u01C4x", "\u03A3igma",
        "I", "i", "Dot.Dot", "dash-Dash", "UPPER", "upper_", "MiXeD.Case-1", "all2", "Agents_x", "\u212A");

    @ParameterizedTest
    @ValueSource(strings = {"UTF8", "UTF8-CI", "UTF8-CI-CHAN", "SQL_ASCII", "WIN1252"})
    void theMembersLoadedRouteEveryMessageAsEveryMemberWould(String variant) throws Exception {
        String enc = variant.startsWith("UTF8") ? "UTF8" : variant;
        String url = enc.equals("UTF8") ? pg.createDatabase() : pg.createDatabaseIn(enc);
        try (Connection owner = pg.owner(url)) {
            pg.applyMentionsSchema(owner);
            if (variant.startsWith("UTF8-CI")) {
                exec(owner, "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level1', deterministic = false)");
                exec(owner, "ALTER TABLE accounts DROP CONSTRAINT accounts_handle_key");
                exec(owner, "ALTER TABLE accounts ALTER COLUMN handle TYPE text COLLATE ci");
                if (variant.equals("UTF8-CI-CHAN")) {
                    exec(owner, "ALTER TABLE channel_members ALTER COLUMN channel_id TYPE text COLLATE ci");
                }
            }
            PostgresFixture.channel(owner, "ch", false);
            PostgresFixture.channel(owner, "ops", true);
            List<String> handles = addAccounts(owner, enc);
            addMessages(owner, mentionPool(handles));
        }
        JdbcMentionStore store = new JdbcMentionStore(PostgresFixture.relayDataSource(url));
        List<UnroutedMessage> batch = store.readUnrouted(0, Long.MAX_VALUE, LIVE_SINCE, 1000);
        assertThat(batch.size()).isGreaterThan(200);
        MentionBatchPlan withEveryMember = MentionBatchPlan.of(batch,
            store.agentMembers(List.of("ch", "ops"), LIVE_SINCE), Integer.MAX_VALUE);
        List<MentionBatchPlan.Parsed> parsed = MentionBatchPlan.parse(batch);
        Map<String, List<ChannelMember>> members = store.agentMembers(MentionBatchPlan.wanted(parsed, Map.of()),
            LIVE_SINCE);
        MentionBatchPlan withWanted = MentionBatchPlan.plan(parsed, members, Integer.MAX_VALUE, Map.of());

        assertThat(summary(withWanted)).isEqualTo(summary(withEveryMember));
        assertThat(withEveryMember.routed()).as("the messages route to someone").hasSizeGreaterThan(100);
    }

    /** An account for each handle the encoding can hold, in ch and some in ops; returns those handles. */
    private static List<String> addAccounts(Connection owner, String enc) throws Exception {
        Charset cs = enc.equals("WIN1252") ? Charset.forName("windows-1252") : Charset.forName("UTF-8");
        List<String> handles = new ArrayList<>();
        int i = 0;
        for (String h : HANDLES) {
            if (!cs.newEncoder().canEncode(h)) {
                continue;
            }
            handles.add(h);
            String id = "a" + i;
            PostgresFixture.account(owner, id, h, i % 7 == 3 ? "human" : "agent", i % 5 == 0 ? "ch" : null);
            PostgresFixture.member(owner, "ch", id, i % 3 == 0);
            if (i % 2 == 0) {
                PostgresFixture.member(owner, "ops", id, false);
            }
            if (i % 4 == 1) {
                PostgresFixture.session(owner, "s" + i, id, NOW, null);
            }
            i++;
        }
        String undefinedByte = enc.equals("SQL_ASCII") ? "ff" : enc.equals("WIN1252") ? "81" : null;
        if (undefinedByte != null) { // a handle and an id that cannot be read
            exec(owner, "INSERT INTO accounts VALUES ('bad-h', convert_from('\\x626f" + undefinedByte + "'::bytea, '"
                + enc + "'), 'agent', null)");
            exec(owner, "INSERT INTO accounts VALUES (convert_from('\\x6964" + undefinedByte + "'::bytea, '" + enc
                + "'), 'badid', 'agent', null)");
            exec(owner, "INSERT INTO channel_members SELECT 'ch', id, false FROM accounts WHERE handle IN ('badid')"
                + " OR id = 'bad-h'");
        }
        return handles;
    }

    /** Each handle as stored, upper- and lower-cased, with a trailing dot; pings of all; near misses. */
    private static List<String> mentionPool(List<String> handles) {
        Set<String> pool = new LinkedHashSet<>();
        for (String h : handles) {
            pool.add(h);
            pool.add(h.toUpperCase(Locale.ROOT));
            pool.add(h.toLowerCase(Locale.ROOT));
            pool.add(h + ".");
        }
        pool.addAll(List.of("ALL", "all", "Channel", "aGeNtS", "KATE", "INES", "STRASSE", "bob", "badid", "BadId",
            "bo", "id", "k", "K", "ada2.", "Bob.Smith-2..", "i", "I"));
        return new ArrayList<>(pool);
    }

    /** One message per mention in each channel, and 150 of one to four mentions drawn from the pool (seeded). */
    private static void addMessages(Connection owner, List<String> pool) throws Exception {
        List<String> authors = List.of("u", "a0", "a1", "a2", "a5");
        int n = 0;
        for (String p : pool) {
            for (String ch : List.of("ch", "ops")) {
                insert(owner, "p" + n++, ch, authors.get(n % authors.size()), "hi @" + p + " there");
            }
        }
        Random r = new Random(42);
        for (int k = 0; k < 150; k++) {
            StringBuilder text = new StringBuilder();
            int m = 1 + r.nextInt(4);
            for (int j = 0; j < m; j++) {
                String p = pool.get(r.nextInt(pool.size()));
                if (p.toLowerCase(Locale.ROOT).matches("all|channel|agents") && r.nextInt(3) > 0) {
                    p = "ada"; // fewer pings of all, so that most messages load by handle
                }
                text.append(" @").append(p);
            }
            insert(owner, "r" + k, r.nextBoolean() ? "ch" : "ops", authors.get(r.nextInt(authors.size())),
                text.toString());
        }
    }

    private static void insert(Connection owner, String id, String ch, String author, String text) throws Exception {
        String esc = text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\t", "\\t");
        String json = "[{\"type\":\"text\",\"text\":\"" + esc + "\"}]";
        exec(owner, "INSERT INTO messages (id, topic_id, author_id, blocks, at_unix_ms) VALUES (?, ?, ?, ?::jsonb, ?)",
            id, "t-" + ch, author, json, NOW);
    }

    private static Map<String, Object> summary(MentionBatchPlan p) {
        Map<String, Object> out = new LinkedHashMap<>();
        p.routed().forEach(x -> out.put(x.message().id(), x.mentions().stream()
            .map(m -> m.member().accountId() + "/" + m.arm()).toList()));
        p.nothingToRoute().forEach(x -> out.put(x.id(), "nothing"));
        p.faults().forEach(f -> out.put(f.message().id(), "fault " + f.reason()));
        out.put("#planned", p.planned());
        return out;
    }
}
