package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outboxrelay.testsupport.LogCapture;
import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Payloads and header values are data of the user's users: the relay never logs them, not even while
 * it retries, poisons or rejects rows (the paths most tempted to print a row).
 */
class PayloadsNeverLoggedIT {
    private static final String PAYLOAD_CANARY = "PAYLOAD-CANARY-7f3a91";
    private static final String HEADER_CANARY = "HEADER-CANARY-c02b55";
    private String connector;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(connector);
    }

    @Test
    void noPayloadOrHeaderValueAppearsInTheLogsOnAnyPath() {
        TestDatabase db = TestPostgres.get().createDatabase("log_canary");
        TestConnect.cluster().kafka().createTopic("log-canary-orders", 1, 1, Map.of("max.message.bytes", "1500"));
        connector = "log-canary";
        // the test's own INSERTs are written before the capture: the driver logs its statements at FINEST
        // delivered normally
        db.execute("INSERT INTO events(type, subject, payload, headers) VALUES ('order.created', 'ok-1', "
            + "'{\"secret\":\"" + PAYLOAD_CANARY + "\"}', '{\"authorization\":\"" + HEADER_CANARY + "\"}')");
        // rejected by the broker, retried, then poisoned
        db.execute("INSERT INTO events(type, subject, payload, headers) VALUES ('order.created', 'big-1', "
            + "jsonb_build_object('secret', '" + PAYLOAD_CANARY + "', 'pad', repeat('x', 3000)), "
            + "'{\"authorization\":\"" + HEADER_CANARY + "\"}')");
        // poisoned before producing: too large for the relay itself
        db.execute("INSERT INTO events(type, subject, payload) VALUES ('order.created', 'huge-1', "
            + "jsonb_build_object('secret', '" + PAYLOAD_CANARY + "', 'pad', repeat('y', 30000)))");
        // poisoned before producing: headers not an object
        db.execute("INSERT INTO events(type, subject, payload, headers) VALUES ('order.created', 'hdr-1', "
            + "'{\"secret\":\"" + PAYLOAD_CANARY + "\"}', '[\"" + HEADER_CANARY + "\"]')");

        try (LogCapture logs = LogCapture.start()) {
            Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
            cfg.put("subscription.orders.topic", "log-canary-orders");
            cfg.put("errors.tolerance", "all");
            cfg.put("outbox.max.attempts", "2");
            cfg.put("outbox.backoff.initial.ms", "100");
            cfg.put("outbox.max.record.bytes", "20000");
            TestConnect.cluster().configureConnector(connector, cfg);
            await().atMost(Duration.ofSeconds(60)).until(() ->
                db.queryLong("SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL") == 3
                    && db.queryLong("SELECT count(*) FROM events WHERE fanned_out_at IS NOT NULL") == 1);

            String text = logs.text();
            assertThat(text).as("the capture saw the relay at work").contains("Poisoned outbox row");
            // Connect's own TRACE lines print whole records by design (TRACE is off in production);
            // every other line, and every line of ours at any level, must be free of row data
            assertThat(text.lines()
                .filter(l -> l.contains(PAYLOAD_CANARY) || l.contains(HEADER_CANARY))
                .filter(l -> !l.contains("TRACE org.apache.kafka")))
                .isEmpty();
        }
    }
}
