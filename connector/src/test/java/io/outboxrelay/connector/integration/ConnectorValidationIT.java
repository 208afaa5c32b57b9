package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.connector.OutboxSourceConnector;
import io.outboxrelay.embedded.ConnectRestClient.Reply;
import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a user sees when they validate a config through the worker's REST API (the form a UI shows
 * before "create"): each problem, including the live ones (database unreachable, table or columns
 * missing, privileges missing), as an actionable error on the key it is about, and a valid config
 * with no error at all. Guards against a connector that is accepted and then fails in its task with a
 * stack trace, or rejects a config with an error on the wrong field.
 */
class ConnectorValidationIT {
    private static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
    private static final String NO_PRIVS_ROLE = "val_noprivs_" + SUFFIX;
    private static final String NO_SCHEMA_ROLE = "val_noschema_" + SUFFIX;
    private static final Path OUTBOX_SQL = TestPostgres.schemaFile("outbox.sql");
    private static TestDatabase db;

    @BeforeAll
    static void createDatabase() {
        db = TestPostgres.get().createDatabase("validation");
        db.execute("CREATE TABLE partial_events (seq BIGSERIAL PRIMARY KEY, id UUID, type TEXT, subject TEXT,"
            + " payload JSONB, occurred_at TIMESTAMPTZ)");
        db.execute("CREATE ROLE " + NO_PRIVS_ROLE + " LOGIN");
        // can read and update the table, but cannot even look into the schema that holds it
        db.execute("CREATE SCHEMA locked; CREATE TABLE locked.events (LIKE public.events INCLUDING ALL);"
            + " CREATE ROLE " + NO_SCHEMA_ROLE + " LOGIN; GRANT SELECT, UPDATE ON locked.events TO " + NO_SCHEMA_ROLE);
    }

    @AfterAll
    static void dropRoles() {
        db.execute("DROP OWNED BY " + NO_PRIVS_ROLE + ", " + NO_SCHEMA_ROLE + "; DROP ROLE " + NO_PRIVS_ROLE
            + "; DROP ROLE " + NO_SCHEMA_ROLE);
    }

    private static Map<String, String> config() {
        Map<String, String> cfg = new HashMap<>(TestConnect.relayConfig(db, "orders", 1));
        cfg.put("name", "validation-" + SUFFIX);
        cfg.put("subscription.orders.topic", "validation-orders");
        return cfg;
    }

    private static Reply validate(Map<String, String> cfg) {
        Reply reply = WorkerRest.validate(cfg);
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        return reply;
    }

    private static int errorCount(Reply reply) {
        return reply.json().get("error_count").asInt();
    }

    /** Asserts exactly one error in the whole reply, on {@code key}, and returns it. */
    private static String onlyErrorOn(Reply reply, String key) {
        List<String> errors = WorkerRest.errorsOn(reply, key);
        assertThat(errors).as("errors on %s in %s", key, reply.body()).hasSize(1);
        assertThat(errorCount(reply)).as("error_count of %s", reply.body()).isEqualTo(1);
        return errors.get(0);
    }

    @Test
    void aValidConfigHasNoError() {
        Reply reply = validate(config());

        assertThat(errorCount(reply)).as(reply.body()).isZero();
    }

    /**
     * Found by a user trial: a mistyped key passed a real worker's validation with no error, and the key meant kept
     * its default (here every event type for the subscriber).
     */
    @Test
    void aMistypedKeyIsReportedOnItWithTheKeyMeant() {
        Map<String, String> cfg = config();
        String subscription = cfg.get("subscriptions").split(",")[0].trim();
        cfg.put("subscription." + subscription + ".evnt.types", "order.*");

        String error = onlyErrorOn(validate(cfg), "subscription." + subscription + ".evnt.types");

        assertThat(error).contains("no key of this connector")
            .contains("did you mean subscription." + subscription + ".event.types?");
    }

    @Test
    void aMissingTableIsReportedOnOutboxTableWithTheSchemaFile() {
        Map<String, String> cfg = config();
        cfg.put("outbox.table", "no_such_events");

        String error = onlyErrorOn(validate(cfg), "outbox.table");

        assertThat(error).contains("\"no_such_events\" does not exist").contains("schemas/sql/outbox.sql");
    }

    @Test
    void aTableMissingColumnsIsReportedOnOutboxTableListingThem() {
        Map<String, String> cfg = config();
        cfg.put("outbox.table", "partial_events");

        String error = onlyErrorOn(validate(cfg), "outbox.table");

        assertThat(error).contains("lacks columns")
            .contains("headers", "fanned_out_at", "fanout", "attempts", "next_attempt_at", "last_error",
                "poisoned_at", "lease_owner", "lease_until")
            .contains("schemas/sql/outbox.sql");
        // the columns it has are not listed
        assertThat(error.substring(error.indexOf('['), error.indexOf(']')))
            .doesNotContain("subject").doesNotContain("payload").doesNotContain("occurred_at");
    }

    @Test
    void aRoleWithoutPrivilegesIsReportedOnTheUserNamingTheGrant() {
        Map<String, String> cfg = config();
        cfg.put("connection.user", NO_PRIVS_ROLE);

        String error = onlyErrorOn(validate(cfg), "connection.user");

        assertThat(error).contains(NO_PRIVS_ROLE).contains("SELECT and UPDATE")
            .contains("GRANT outbox_relay TO " + NO_PRIVS_ROLE);

        // control: the same role passes once it is in the group schemas/sql/outbox.sql grants to
        String group = "GRANT outbox_relay TO " + NO_PRIVS_ROLE;
        db.execute(group);
        try {
            assertThat(errorCount(validate(cfg))).isZero();
        } finally {
            db.execute("REVOKE outbox_relay FROM " + NO_PRIVS_ROLE);
        }
    }

    /**
     * The contract: the relay needs only SELECT and UPDATE on the table. A role granted the table but not its
     * wake-up flag is accepted (its tasks poll while quiet, LeastPrivilegeRoleIT); the control is the same role
     * without the table's grants, refused on the user.
     */
    @Test
    void aRoleWithTheTablesGrantsAloneIsAcceptedWithoutTheWakeupFlags() {
        Map<String, String> cfg = config();
        cfg.put("connection.user", NO_PRIVS_ROLE);
        assertThat(onlyErrorOn(validate(cfg), "connection.user")).contains("SELECT and UPDATE");
        db.execute("GRANT SELECT, UPDATE ON events TO " + NO_PRIVS_ROLE);
        try {
            assertThat(errorCount(validate(cfg))).isZero();
            cfg.put("outbox.listen.enabled", "false");
            assertThat(errorCount(validate(cfg))).isZero();
        } finally {
            db.execute("REVOKE SELECT, UPDATE ON events FROM " + NO_PRIVS_ROLE);
        }
    }

    @Test
    void retentionWithoutDeletePrivilegeIsReportedOnRetention() {
        Map<String, String> cfg = config();
        cfg.put("connection.user", NO_PRIVS_ROLE);
        cfg.put("outbox.retention.ms", "86400000");
        db.execute("GRANT outbox_relay TO " + NO_PRIVS_ROLE);
        try {
            String error = onlyErrorOn(validate(cfg), "outbox.retention.ms");

            assertThat(error).contains(NO_PRIVS_ROLE + " may not DELETE from \"events\"")
                .contains("GRANT DELETE ON \"events\" TO outbox_relay").contains("outbox.retention.ms=0");

            // controls: without retention the role needs no DELETE; with DELETE granted retention is fine
            cfg.put("outbox.retention.ms", "0");
            assertThat(errorCount(validate(cfg))).isZero();
            cfg.put("outbox.retention.ms", "86400000");
            db.execute("GRANT DELETE ON events TO " + NO_PRIVS_ROLE);
            assertThat(errorCount(validate(cfg))).isZero();
        } finally {
            db.execute("REVOKE DELETE ON events FROM " + NO_PRIVS_ROLE + "; REVOKE outbox_relay FROM " + NO_PRIVS_ROLE);
        }
    }

    @Test
    void aSchemaTheRoleCannotUseIsReportedOnTheUserNotAsAConnectionFailure() {
        Map<String, String> cfg = config();
        cfg.put("connection.user", NO_SCHEMA_ROLE);
        cfg.put("outbox.table", "locked.events");

        String error = onlyErrorOn(validate(cfg), "connection.user");

        assertThat(error).contains("permission denied for schema locked").contains("42501")
            .doesNotContain("cannot connect");
    }

    /** A table copied from a short CREATE TABLE: the relay would wait for the sweep for every row. */
    @Test
    void aTableWithoutTheNotifyTriggerIsReportedOnTheChannelWithTheFix() {
        db.execute("CREATE TABLE no_trigger_events (LIKE events INCLUDING ALL)");
        Map<String, String> cfg = config();
        cfg.put("outbox.table", "no_trigger_events");

        String error = onlyErrorOn(validate(cfg), "outbox.notify.channel");

        assertThat(error).contains("\"no_trigger_events\" has no enabled INSERT trigger that NOTIFYs")
            .contains("psql -v table=no_trigger_events -v channel=outbox_events -f schemas/sql/outbox.sql")
            .contains("outbox.listen.enabled=false");

        // controls: polling needs no trigger; the fix it names makes the table pass
        cfg.put("outbox.listen.enabled", "false");
        assertThat(errorCount(validate(cfg))).isZero();
        cfg.remove("outbox.listen.enabled");
        db.runScript(OUTBOX_SQL, Map.of("table", "no_trigger_events"));
        assertThat(errorCount(validate(cfg))).as("after outbox.sql").isZero();
    }

    @Test
    void aTriggerOnAnotherChannelIsReportedOnTheChannel() {
        Map<String, String> cfg = config();
        cfg.put("outbox.notify.channel", "elsewhere");

        String error = onlyErrorOn(validate(cfg), "outbox.notify.channel");

        assertThat(error).contains("NOTIFYs from trigger events_notify_insert (channel 'outbox_events'),"
            + " not on 'elsewhere'").contains("psql -v table=events -v channel=elsewhere");

        // control: a table whose trigger was made for that channel passes
        db.runScript(OUTBOX_SQL, Map.of("table", "elsewhere_events", "channel", "elsewhere"));
        cfg.put("outbox.table", "elsewhere_events");
        assertThat(errorCount(validate(cfg))).isZero();
    }

    @Test
    void aTableWithoutThePartialClaimIndexIsReportedWithTheIndexToCreate() {
        db.runScript(OUTBOX_SQL, Map.of("table", "no_index_events"));
        // an index on seq with another predicate does not serve the claim
        db.execute("DROP INDEX no_index_events_unfanned_idx;"
            + " CREATE INDEX no_index_events_unfanned_only ON no_index_events (seq) WHERE fanned_out_at IS NULL");
        Map<String, String> cfg = config();
        cfg.put("outbox.table", "no_index_events");

        String error = onlyErrorOn(validate(cfg), "outbox.table");

        String create = "CREATE INDEX CONCURRENTLY no_index_events_unfanned_idx ON \"no_index_events\""
            + " (seq, (hashtext(\"subject\"::text)::bigint + 2147483648)) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL;";
        assertThat(error).contains("no partial index for the relay's claim").endsWith(create);

        // control: the statement it names, run as it is, is the fix
        db.execute(create);
        assertThat(errorCount(validate(cfg))).isZero();
    }

    /** A claim index from before migration V10 (seq alone) serves the claim: a warning naming V10, not an error. */
    @Test
    void aClaimIndexWithoutTheSubjectHashIsAWarningInTheLogNotAnError() {
        db.runScript(OUTBOX_SQL, Map.of("table", "pre_v10_events"));
        db.execute("DROP INDEX pre_v10_events_unfanned_idx; CREATE INDEX pre_v10_events_unfanned_idx ON pre_v10_events"
            + " (seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL");
        Map<String, String> cfg = config();

        try (LogCapture capture = LogCapture.start()) {
            cfg.put("outbox.table", "events");
            assertThat(errorCount(validate(cfg))).isZero();
            assertThat(capture.text()).as("the index of V10: no warning").doesNotContain("has no subject hash");

            cfg.put("outbox.table", "pre_v10_events");
            assertThat(errorCount(validate(cfg))).isZero();
            assertThat(capture.text()).contains("The claim's index on table \"pre_v10_events\" has no subject hash")
                .contains("Apply migration V10");
        }
    }

    @Test
    void aTableWithFillfactor100IsAWarningInTheLogNotAnError() {
        db.runScript(OUTBOX_SQL, Map.of("table", "packed_events"));
        db.execute("ALTER TABLE packed_events RESET (fillfactor)");
        Map<String, String> cfg = config();
        String warning = "Table \"packed_events\" has fillfactor 100";

        try (LogCapture capture = LogCapture.start()) {
            cfg.put("outbox.table", "events");
            assertThat(errorCount(validate(cfg))).isZero();
            assertThat(capture.text()).as("fillfactor 50: no warning").doesNotContain("has fillfactor 100");

            cfg.put("outbox.table", "packed_events");
            assertThat(errorCount(validate(cfg))).isZero();
            assertThat(capture.text()).contains(warning)
                .contains("ALTER TABLE \"packed_events\" SET (fillfactor = 50)");
        }
    }

    @Test
    void anUnreachableDatabaseIsReportedOnTheUrl() throws IOException {
        Map<String, String> cfg = config();
        cfg.put("connection.url", "jdbc:postgresql://localhost:" + closedPort() + "/" + db.name());

        String error = onlyErrorOn(validate(cfg), "connection.url");

        assertThat(error).contains("cannot connect to jdbc:postgresql://localhost:").contains("refused")
            .contains("08001");
    }

    @Test
    void aMissingDatabaseIsReportedOnTheUrl() {
        Map<String, String> cfg = config();
        cfg.put("connection.url", TestPostgres.get().jdbcUrl("no_such_db"));

        String error = onlyErrorOn(validate(cfg), "connection.url");

        assertThat(error).contains("\"no_such_db\" does not exist").contains("3D000");
    }

    @Test
    void anUnknownRoleIsReportedOnTheUser() {
        Map<String, String> cfg = config();
        cfg.put("connection.user", "no_such_role_" + SUFFIX);
        cfg.put("connection.password", "whatever");

        String error = onlyErrorOn(validate(cfg), "connection.user");

        assertThat(error).contains("no_such_role_" + SUFFIX).contains("28000")
            .contains("check connection.user and connection.password");
    }

    @Test
    void aForbiddenDriverPropertyIsReportedOnTheUrlAndNothingConnects() {
        Map<String, String> cfg = config();
        cfg.put("connection.url", db.jdbcUrl() + "?sslmode=disable&socketFactory=org.example.EvilFactory");

        String error = onlyErrorOn(validate(cfg), "connection.url");

        assertThat(error).contains("'socketFactory' is not allowed").doesNotContain("EvilFactory")
            .doesNotContain("cannot connect");
    }

    @Test
    void anInvalidSubscriptionNameIsReportedOnSubscriptions() {
        Map<String, String> cfg = config();
        cfg.put("subscriptions", "orders,bad name!");

        String error = onlyErrorOn(validate(cfg), "subscriptions");

        assertThat(error).contains("'bad name!'");
    }

    @Test
    void anInvalidTopicIsReportedOnThatSubscriptionsTopicKey() {
        Map<String, String> cfg = config();
        cfg.put("subscription.orders.topic", "orders topic!");

        String error = onlyErrorOn(validate(cfg), "subscription.orders.topic");

        assertThat(error).contains("Kafka topic name");
    }

    @Test
    void anInvalidGlobIsReportedOnThatSubscriptionsEventTypesKey() {
        Map<String, String> cfg = config();
        cfg.put("subscription.orders.event.types", "order.*,order.$created");

        String error = onlyErrorOn(validate(cfg), "subscription.orders.event.types");

        assertThat(error).contains("'order.$created' is not an event type glob");
    }

    @Test
    void mentionRecoveryWithOneTaskSlotIsReportedOnMentionsEnabled() {
        Map<String, String> cfg = config();
        cfg.put("mentions.enabled", "true");
        cfg.put("tasks.max", "1");

        String error = onlyErrorOn(validate(cfg), "mentions.enabled");

        assertThat(error).contains("tasks.max").contains("at least 2");

        // control: two slots are enough
        cfg.put("tasks.max", "2");
        assertThat(WorkerRest.errorsOn(validate(cfg), "mentions.enabled")).isEmpty();
    }

    /**
     * Mention recovery on a database the role sees without the chat tables, or without a grant the task needs: the
     * connector is refused on mentions.enabled with the fix, where its task would fail every pass at run time.
     */
    @Test
    void mentionRecoveryWithoutTheChatTablesOrTheirGrantsIsReportedOnMentionsEnabled() {
        Map<String, String> cfg = config();
        cfg.put("mentions.enabled", "true");
        cfg.put("tasks.max", "2");
        cfg.put("connection.user", NO_PRIVS_ROLE);
        db.execute("GRANT outbox_relay TO " + NO_PRIVS_ROLE);
        try {
            assertThat(errorCount(validate(cfg))).as("control: mentions.sql applied, the group granted").isZero();

            db.execute("REVOKE INSERT ON owed_mentions FROM outbox_relay");
            assertThat(onlyErrorOn(validate(cfg), "mentions.enabled")).contains("INSERT ON owed_mentions")
                .contains("GRANT outbox_relay TO " + NO_PRIVS_ROLE).contains("schemas/sql/mentions.sql");
            db.execute("GRANT INSERT ON owed_mentions TO outbox_relay");
            db.execute("REVOKE SELECT ON accounts FROM outbox_relay; GRANT SELECT (id, handle, kind, home_channel_id)"
                + " ON accounts TO outbox_relay");
            assertThat(errorCount(validate(cfg))).as("grants on the columns the task reads are enough").isZero();

            cfg.put("connection.user", db.user());
            cfg.put("connection.url", cfg.get("connection.url") + (cfg.get("connection.url").contains("?") ? "&" : "?")
                + "currentSchema=locked"); // a search path without the chat tables
            cfg.put("outbox.table", "public.events");
            String lockedUrl = cfg.get("connection.url");
            assertThat(onlyErrorOn(validate(cfg), "mentions.enabled"))
                .contains("messages, topics, channels, held_messages, agent_sessions, channel_members, accounts,"
                    + " owed_mentions").contains("apply schemas/sql/mentions.sql").doesNotContain("USAGE");

            // tables of two of those names in a schema of the search path that the role may not use: a GRANT USAGE
            // for those two, mentions.sql for the others
            db.execute("CREATE SCHEMA chatonly");
            List<String> chatTables = List.of("messages", "accounts", "topics", "channels", "held_messages",
                "agent_sessions", "channel_members", "owed_mentions");
            for (String table : chatTables.subList(0, 2)) {
                db.execute("CREATE TABLE chatonly." + table + " (LIKE public." + table + ")");
            }
            cfg.put("connection.user", NO_PRIVS_ROLE);
            cfg.put("connection.url", lockedUrl.replace("currentSchema=locked", "currentSchema=chatonly"));
            assertThat(WorkerRest.errorsOn(validate(cfg), "mentions.enabled")).satisfiesExactlyInAnyOrder(
                e -> assertThat(e).contains("the chat tables messages, accounts,")
                    .contains("GRANT USAGE ON SCHEMA chatonly TO outbox_relay"),
                e -> assertThat(e).contains("the chat tables topics, channels, held_messages, agent_sessions,"
                    + " channel_members, owed_mentions,").contains("apply schemas/sql/mentions.sql"));

            // all of them there: the fix is the GRANT USAGE alone
            for (String table : chatTables.subList(2, chatTables.size())) {
                db.execute("CREATE TABLE chatonly." + table + " (LIKE public." + table + ")");
            }
            assertThat(onlyErrorOn(validate(cfg), "mentions.enabled")).contains("chatonly")
                .contains("GRANT USAGE ON SCHEMA chatonly TO outbox_relay").doesNotContain("apply schemas/sql");
        } finally {
            db.execute("DROP SCHEMA IF EXISTS chatonly CASCADE");
            db.execute("GRANT INSERT ON owed_mentions TO outbox_relay; GRANT SELECT ON accounts TO outbox_relay;"
                + " REVOKE outbox_relay FROM " + NO_PRIVS_ROLE);
        }
    }

    @Test
    void receiptsOnTheWakeUpChannelAreRefusedOnTheReceiptsKey() {
        Map<String, String> cfg = config();
        cfg.put("outbox.notify.channel", "outbox_events");
        cfg.put("outbox.fanned.channel", "outbox_events");

        String error = onlyErrorOn(validate(cfg), "outbox.fanned.channel");

        assertThat(error).contains("outbox.notify.channel").contains("a claim per commit");

        // control: a channel of their own
        cfg.put("outbox.fanned.channel", "outbox_receipts");
        assertThat(WorkerRest.errorsOn(validate(cfg), "outbox.fanned.channel")).isEmpty();
    }

    @Test
    void theConnectorsOwnValidateAttachesLiveErrorsToTheirKeys() {
        // the same checks without the worker, as a UI or a test calling Connector.validate sees them
        Map<String, String> cfg = config();
        cfg.put("outbox.table", "no_such_events");
        cfg.put("connection.user", NO_PRIVS_ROLE);

        Config result = new OutboxSourceConnector().validate(cfg);

        assertThat(errorsOf(result, "outbox.table")).singleElement().asString().contains("does not exist");
        assertThat(errorsOf(result, "connection.url")).isEmpty();
        assertThat(errorsOf(result, "connection.password")).isEmpty();
    }

    private static List<String> errorsOf(Config result, String key) {
        return result.configValues().stream().filter(v -> v.name().equals(key))
            .map(ConfigValue::errorMessages).findFirst().orElse(List.of());
    }

    /** A port nothing listens on: bound once by the OS, then released. */
    static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
