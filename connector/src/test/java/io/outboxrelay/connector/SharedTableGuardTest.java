package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What relay sessions announce about their table and records, and who counts as another connector. */
class SharedTableGuardTest {
    private static final RecordShape ENVELOPE = new RecordShape(RecordShape.ValueFormat.ENVELOPE, false, null);
    private static final List<Subscription> HOOKS = List.of(new Subscription("webhooks", "hooks", List.of("*"), false));
    private static final List<Subscription> MAIL = List.of(new Subscription("mail", "mail", List.of("*"), false));

    private static SharedTableGuard guard(String connector, List<Subscription> subs) {
        return new SharedTableGuard(connector, "\"events\"", subs, ENVELOPE);
    }

    @Test
    void connectorsWithOtherSubscriptionsOnTheTableConflictAndTheSameOnesDoNot() {
        String hooks = guard("hooks", HOOKS).applicationName("hooks-0");
        assertThat(guard("mail", MAIL).conflictAmong(List.of(hooks))).contains("'mail'").contains("'hooks'");
        assertThat(guard("hooks-too", HOOKS).conflictAmong(List.of(hooks))).isNull();
        assertThat(new SharedTableGuard("mail", "\"app\".\"events\"", MAIL, ENVELOPE).conflictAmong(List.of(hooks)))
            .as("another table").isNull();
        assertThat(new SharedTableGuard("mail", "\"events\"", HOOKS,
            new RecordShape(RecordShape.ValueFormat.PAYLOAD, false, null)).conflictAmong(List.of(hooks)))
            .as("the same subscriptions in another record shape send mixed records to one topic").isNotNull();
        assertThat(guard("x", MAIL).conflictAmong(List.of(guard("x", MAIL).applicationName("x-0"),
            new SharedTableGuard("x", "\"public\".\"events\"", MAIL, ENVELOPE).applicationName("x-1"))))
            .as("an unqualified table is public's").isNull();
    }

    @Test
    void longNamesThatShareTheirStartAreToldApartAndAConnectorIsNeverItsOwnConflict() {
        String prefix = "acme-production-outbox-relay-v2-";
        SharedTableGuard orders = guard(prefix + "orders", HOOKS);
        SharedTableGuard billing = guard(prefix + "billing", MAIL);
        String ordersName = orders.applicationName(prefix + "orders-0");
        assertThat(ordersName.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(63);
        assertThat(billing.conflictAmong(List.of(ordersName))).as("cut to the same prefix, still another connector")
            .isNotNull();
        // the same connector reconfigured: its old tasks' sessions announce the old subscriptions
        assertThat(guard(prefix + "orders", MAIL).conflictAmong(List.of(ordersName))).isNull();
        String exactly = "a".repeat(27);
        assertThat(guard(exactly, MAIL).conflictAmong(List.of(guard(exactly, HOOKS).applicationName(exactly + "-0"))))
            .isNull();
    }

    @Test
    void theNamePartIsAsciiSoPostgresKeepsTheWholeAnnouncement() {
        String name = guard("zoë-東京", HOOKS).applicationName("zoë-東京-0");
        assertThat(name).matches("[\\x20-\\x7e]+").startsWith("outbox-relay:zo?-??-0@");
        assertThat(guard("mail", MAIL).conflictAmong(List.of(name))).isNotNull();
    }

    @Test
    void aConnectorReadingTheFieldsFromOtherColumnsConflictsAndTheSameColumnsDoNot() {
        OutboxColumns debezium = new OutboxColumns("id", "type", "aggregateid", "payload", "", "occurred_at");
        OutboxColumns byAggregateType = new OutboxColumns("id", "type", "aggregatetype", "payload", "", "occurred_at");
        String running = new SharedTableGuard("dbz", "\"outbox\"", HOOKS, ENVELOPE, debezium).applicationName("dbz-0");

        assertThat(new SharedTableGuard("other", "\"outbox\"", HOOKS, ENVELOPE, byAggregateType)
            .conflictAmong(List.of(running))).as("other keys for the same rows").contains("outbox.column.*");
        assertThat(new SharedTableGuard("other", "\"outbox\"", HOOKS, ENVELOPE, OutboxColumns.DEFAULT)
            .conflictAmong(List.of(running))).as("the default columns against a mapping").isNotNull();
        assertThat(new SharedTableGuard("twin", "\"outbox\"", HOOKS, ENVELOPE,
            new OutboxColumns("id", "type", "aggregateid", "payload", "", "occurred_at")).conflictAmong(List.of(running)))
            .as("the same mapping").isNull();
    }

    @Test
    void theDefaultColumnsKeepTheFingerprintOfVersionsWithoutTheMapping() {
        // what a relay of the version before outbox.column.* announced for these subscriptions: a rolling
        // upgrade must not make the old and the new connectors on one table refuse each other
        assertThat(SharedTableGuard.fingerprint(HOOKS, ENVELOPE, OutboxColumns.DEFAULT)).isEqualTo("8a2e20");
        assertThat(SharedTableGuard.fingerprint(HOOKS, ENVELOPE,
            new OutboxColumns("id", "type", "subject", "body", "headers", "occurred_at"))).isNotEqualTo("8a2e20");
    }

    @Test
    void aStrictConnectorAndABestEffortOneOnOneTableConflictAndBestEffortKeepsItsFingerprint() {
        String strict = new SharedTableGuard("strict", "\"events\"", HOOKS, ENVELOPE, OutboxColumns.DEFAULT, true)
            .applicationName("strict-0");

        assertThat(new SharedTableGuard("plain", "\"events\"", HOOKS, ENVELOPE, OutboxColumns.DEFAULT, false)
            .conflictAmong(List.of(strict))).as("best-effort beside strict").contains("outbox.ordering");
        assertThat(new SharedTableGuard("twin", "\"events\"", HOOKS, ENVELOPE, OutboxColumns.DEFAULT, true)
            .conflictAmong(List.of(strict))).as("strict beside strict").isNull();
        assertThat(SharedTableGuard.fingerprint(HOOKS, ENVELOPE, OutboxColumns.DEFAULT, false)).isEqualTo("8a2e20");
    }
}
