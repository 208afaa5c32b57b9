package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.LogCapture;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class ReceiptsDroppedTest {
    private final long[] nanos = {0};
    private final ReceiptsDropped dropped = new ReceiptsDropped(() -> nanos[0]);
    private final SQLException full = new SQLException("too many notifications in the NOTIFY queue", "54000");

    @Test
    void warnsAtTheFirstStampWithoutReceiptsThenAtMostOnceAMinuteWithTheRowsSince() {
        try (LogCapture logs = LogCapture.start()) {
            dropped.dropped(3, 1.0, full);
            nanos[0] += ReceiptsDropped.WARN_EVERY_NANOS - 1;
            dropped.dropped(5, 1.0, full);
            dropped.dropped(7, 1.0, full);
            assertThat(count(logs.text(), "NOTIFY queue is full")).isEqualTo(1);
            assertThat(logs.text()).contains("100% used): stamped 3 row(s) without their write receipts;");

            nanos[0] += 1;
            dropped.dropped(2, 0.99, full);
            assertThat(count(logs.text(), "NOTIFY queue is full")).isEqualTo(2);
            assertThat(logs.text()).contains("stamped 14 row(s) without their write receipts since the last warning");

            dropped.dropped(4, 1.0, full);
            dropped.sent();
            dropped.sent();
            assertThat(count(logs.text(), "Write receipts are sent again")).isEqualTo(1);
            assertThat(logs.text()).contains("(4 more row(s) went without one since the last warning)");

            dropped.dropped(1, 1.0, full); // a new episode warns at once
            assertThat(count(logs.text(), "NOTIFY queue is full")).isEqualTo(3);
        }
    }

    @Test
    void saysNothingWhileReceiptsGoOut() {
        try (LogCapture logs = LogCapture.start()) {
            dropped.sent();
            assertThat(logs.text()).doesNotContain("receipts");
        }
    }

    private static int count(String text, String what) {
        return text.split(java.util.regex.Pattern.quote(what), -1).length - 1;
    }
}
