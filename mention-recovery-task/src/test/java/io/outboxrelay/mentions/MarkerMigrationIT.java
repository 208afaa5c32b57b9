package io.outboxrelay.mentions;

import static io.outboxrelay.mentions.PostgresFixture.exec;
import static io.outboxrelay.mentions.PostgresFixture.message;
import static io.outboxrelay.mentions.PostgresFixture.queryLong;
import static io.outboxrelay.mentions.PostgresFixture.routedAt;
import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.ProjectFiles;
import io.outboxrelay.testsupport.SqlScript;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Adding the marker to an existing messages table seeds forward: a message that existed before the
 * migration is not recovered (its marker is the migration time), one inserted afterwards is. Guards
 * against a first scan replaying history, and against the migration rewriting the table.
 */
class MarkerMigrationIT {
    private static PostgresFixture pg;

    @BeforeAll
    static void startPostgres() {
        pg = new PostgresFixture();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        pg.close();
    }

    /** The server's tables as they were before the marker existed. */
    private static void createLegacySchema(Connection c) throws SQLException {
        exec(c, "CREATE TABLE channels (id TEXT PRIMARY KEY, name TEXT, "
            + "mandatory_subscription BOOLEAN NOT NULL DEFAULT false)");
        exec(c, "CREATE TABLE topics (id TEXT PRIMARY KEY, channel_id TEXT NOT NULL REFERENCES channels)");
        exec(c, "CREATE TABLE messages (id TEXT PRIMARY KEY, seq BIGSERIAL UNIQUE, "
            + "topic_id TEXT NOT NULL REFERENCES topics, author_id TEXT NOT NULL, blocks JSONB NOT NULL, "
            + "at_unix_ms BIGINT NOT NULL)");
        exec(c, "INSERT INTO channels (id) VALUES ('ch')");
        exec(c, "INSERT INTO topics (id, channel_id) VALUES ('t-ch', 'ch')");
    }

    private static void migrate(Connection c) throws SQLException {
        SqlScript.run(c, ProjectFiles.schemaFile("mentions-add-marker-migration.sql"));
    }

    @Test
    void recoversOnlyMessagesInsertedAfterTheMigration() throws SQLException {
        String url = pg.createDatabase();
        try (Connection owner = pg.owner(url)) {
            createLegacySchema(owner);
            message(owner, "before", "ch", "u", "@ada", 1_000);
            long filenodeBefore = queryLong(owner, "SELECT relfilenode FROM pg_class WHERE relname = 'messages'");
            long startedAt = System.currentTimeMillis();

            migrate(owner);
            pg.applyMentionsSchema(owner);
            message(owner, "after", "ch", "u", "@ada", 2_000);

            assertThat(routedAt(owner, "before")).isBetween(startedAt - 1_000, System.currentTimeMillis() + 1_000);
            assertThat(routedAt(owner, "after")).isNull();
            assertThat(queryLong(owner, "SELECT relfilenode FROM pg_class WHERE relname = 'messages'"))
                .as("ADD COLUMN with a constant default must not rewrite the table").isEqualTo(filenodeBefore);
            assertThat(queryLong(owner, "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                + "WHERE c.relname = 'messages_mentions_unrouted_idx' AND i.indisvalid")).isEqualTo(1);

            List<UnroutedMessage> unrouted = new JdbcMentionStore(PostgresFixture.relayDataSource(url))
                .readUnrouted(0, Long.MAX_VALUE, 0, 10);
            assertThat(unrouted).extracting(UnroutedMessage::id).containsExactly("after");
        }
    }

    @Test
    void changesNothingWhenRunAgain() throws SQLException {
        String url = pg.createDatabase();
        try (Connection owner = pg.owner(url)) {
            createLegacySchema(owner);
            message(owner, "before", "ch", "u", "@ada", 1_000);
            migrate(owner);
            long marker = routedAt(owner, "before");
            message(owner, "between", "ch", "u", "@ada", 2_000);

            migrate(owner);
            message(owner, "after", "ch", "u", "@ada", 3_000);

            assertThat(routedAt(owner, "before")).isEqualTo(marker);
            assertThat(routedAt(owner, "between")).isNull();
            assertThat(routedAt(owner, "after")).isNull();
        }
    }

    @Test
    void isANoOpOnATableCreatedByMentionsSql() throws SQLException {
        String url = pg.createDatabase();
        try (Connection owner = pg.owner(url)) {
            pg.applyMentionsSchema(owner);
            exec(owner, "INSERT INTO channels (id) VALUES ('ch')");
            exec(owner, "INSERT INTO topics (id, channel_id) VALUES ('t-ch', 'ch')");
            message(owner, "m1", "ch", "u", "@ada", 1_000);

            migrate(owner);

            assertThat(routedAt(owner, "m1")).isNull();
        }
    }
}
