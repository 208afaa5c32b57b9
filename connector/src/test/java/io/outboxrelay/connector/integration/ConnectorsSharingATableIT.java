package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A row carries one fanned_out_at, stamped for the subscriptions of whichever connector claimed it. So
 * connectors on one table must serve the same subscriptions: a second connector with other ones would
 * take rows the first one's subscribers never get. It is refused by validate() and, when it slips past
 * validation (the other connector was stopped then), by its task before the first claim.
 */
class ConnectorsSharingATableIT {
    private static final String CLASS = "io.outboxrelay.connector.OutboxSourceConnector";

    @AfterEach
    void deleteConnectors() {
        for (String name : List.of("share-hooks", "share-mail", "share-hooks-too")) {
            if (TestConnect.cluster().connectors().contains(name)) {
                TestConnect.cluster().deleteConnector(name);
            }
        }
    }

    private static Map<String, String> config(TestDatabase db, String name, String subscription) {
        Map<String, String> cfg = TestConnect.relayConfig(db, subscription, 1);
        cfg.put("name", name);
        cfg.put("subscription." + subscription + ".topic", "share-" + subscription);
        return cfg;
    }

    private static List<String> subscriptionErrors(ConfigInfos infos) {
        return infos.configs().stream().map(ConfigInfo::configValue)
            .filter(v -> v.name().equals("subscriptions")).flatMap(v -> v.errors().stream()).toList();
    }

    @Test
    void aSecondConnectorWithOtherSubscriptionsIsRefusedAndNoEventIsLost() throws InterruptedException {
        TestDatabase db = TestPostgres.get().createDatabase("shared_table");
        TestConnect.cluster().configureConnector("share-hooks", config(db, "share-hooks", "webhooks"));
        db.insertEvents(20, 4, "order.created");
        assertThat(TestConnect.consume(20, Duration.ofSeconds(30), "share-webhooks")).hasSize(20);

        // the same subscriptions on the same table: allowed (tasks share the rows, as with more tasks)
        assertThat(subscriptionErrors(TestConnect.cluster().validateConnectorConfig(CLASS,
            config(db, "share-hooks-too", "webhooks")))).isEmpty();
        // other subscriptions: refused, naming both connectors and the fix
        List<String> errors = subscriptionErrors(TestConnect.cluster().validateConnectorConfig(CLASS,
            config(db, "share-mail", "mail")));
        assertThat(errors).singleElement().asString().contains("'share-mail'").contains("'share-hooks'")
            .contains("same outbox table").contains("its own outbox table");

        // slipping past validate(): the mail connector is created while the hooks connector is stopped,
        // then the hooks connector comes back. Whichever starts second is refused at its task's start.
        TestConnect.cluster().stopConnector("share-hooks");
        await().atMost(Duration.ofSeconds(30)).until(() -> db.queryLong("SELECT count(*) FROM pg_stat_activity"
            + " WHERE datname = current_database() AND application_name LIKE 'outbox-relay:share-hooks%'") == 0);
        TestConnect.cluster().configureConnector("share-mail", config(db, "share-mail", "mail"));
        TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning("share-mail", 1, "mail up");
        TestConnect.cluster().resumeConnector("share-hooks");
        await().atMost(Duration.ofSeconds(30)).until(() -> taskState("share-hooks").equals("FAILED"));
        assertThat(TestConnect.cluster().connectorStatus("share-hooks").tasks().get(0).trace())
            .contains("'share-hooks'").contains("'share-mail'").contains("other subscriptions");

        // every event written before the second connector existed reached the first one's subscriber once
        assertThat(db.queryLong("SELECT count(*) FROM events WHERE jsonb_exists(fanout, 'webhooks')")).isEqualTo(20);
        assertThat(TestConnect.countRecords("share-webhooks")).isEqualTo(20);
    }

    private static String taskState(String connector) {
        ConnectorStateInfo info = TestConnect.cluster().connectorStatus(connector);
        return info.tasks().isEmpty() ? "NONE" : info.tasks().get(0).state();
    }
}
