package io.outboxrelay.connector.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.TestDatabase;
import io.outboxrelay.testsupport.TestPostgres;
import io.outboxrelay.writer.ConnectionSource;
import io.outboxrelay.writer.FanoutReceipts;
import io.outboxrelay.writer.OutboxWriter;
import io.outboxrelay.writer.Receipt;
import io.outboxrelay.writer.RecordedEvent;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A writer records an event in its own transaction and awaits the relay's fan-out receipt: by
 * NOTIFY within a second of the stamp when nothing fails, and by reading {@code fanned_out_at} when
 * the receipt notification never arrives.
 */
class WriteReceiptIT {
    private String connector;

    @AfterEach
    void deleteConnector() {
        TestConnect.cluster().deleteConnector(connector);
    }

    private static FanoutReceipts receipts(TestDatabase db) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", db.user());
        return FanoutReceipts.builder(ConnectionSource.of(db.jdbcUrl(), p)).fallbackInterval(Duration.ofSeconds(5))
            .start();
    }

    private static RecordedEvent recordAndCommit(TestDatabase db) throws Exception {
        try (Connection tx = db.connect()) {
            tx.setAutoCommit(false);
            RecordedEvent e = new OutboxWriter().record(tx, "order.created", "order-7", "{\"total\":42}",
                Map.of("traceparent", "00-abc-01"));
            tx.commit();
            return e;
        }
    }

    @Test
    void theWriterGetsItsReceiptByNotifyWithinASecondOfTheFanOut() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("receipt_notify");
        connector = "receipt-notify";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", "receipt-orders");
        TestConnect.cluster().configureConnector(connector, cfg);
        TestConnect.cluster().assertions().assertConnectorAndExactlyNumTasksAreRunning(connector, 1, "relay up");

        try (FanoutReceipts receipts = receipts(db)) {
            RecordedEvent event = recordAndCommit(db);
            Receipt receipt = receipts.await(event.id(), Duration.ofSeconds(30));
            Instant received = Instant.now();
            assertThat(receipt.source()).isEqualTo(Receipt.Source.NOTIFY);
            assertThat(Duration.between(receipt.fannedOutAt(), received)).isLessThan(Duration.ofSeconds(1));
            assertThat(receipt.fanout()).contains("receipt-orders");
        }
    }

    @Test
    void theWriterStillGetsItsReceiptWhenTheNotificationIsNeverDelivered() throws Exception {
        TestDatabase db = TestPostgres.get().createDatabase("receipt_fallback");
        connector = "receipt-fallback";
        Map<String, String> cfg = TestConnect.relayConfig(db, "orders", 1);
        cfg.put("subscription.orders.topic", "receipt-fallback-orders");
        cfg.put("outbox.fanned.channel", "nobody_listens_here"); // receipts go where the writer is not listening
        TestConnect.cluster().configureConnector(connector, cfg);

        try (FanoutReceipts receipts = receipts(db)) {
            RecordedEvent event = recordAndCommit(db);
            Receipt receipt = receipts.await(event.id(), Duration.ofSeconds(30));
            assertThat(receipt.source()).isEqualTo(Receipt.Source.FALLBACK);
            assertThat(receipt.fannedOutAt()).isNotNull();
        }
    }
}
