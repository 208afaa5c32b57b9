package io.outboxrelay.connector;

import io.outboxrelay.common.ConnectKeys;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;

/**
 * What the connector tells Connect about exactly-once delivery (docs/exactly-once.md, 3.10). The relay names
 * its delivered rows in its source offsets whenever {@code errors.tolerance=none}, so any transaction boundary
 * serves exactly-once; under {@code errors.tolerance=all} a record a tolerated failure dropped is acknowledged
 * like a filtered one and Connect commits the offsets after it, so no configuration with it can be exactly-once.
 */
final class ExactlyOnceRules {
    static final String ERRORS_TOLERANCE = ConnectKeys.ERRORS_TOLERANCE;

    static final String TOLERANCE_ALL_REASON = "exactly-once delivery needs errors.tolerance=none: under"
        + " errors.tolerance=all a record that a converter or transform failure dropped reaches the relay like a"
        + " filtered one and Connect commits the offsets after it, so the relay cannot tell which rows are in Kafka;"
        + " it would either produce such a row's other records again or lose the dropped one. Set"
        + " errors.tolerance=none (a deliberate Filter transform is still fine), or leave exactly.once.support at"
        + " requested and transaction.boundary at poll for at-least-once delivery";

    private ExactlyOnceRules() {
    }

    static boolean toleratesAllErrors(Map<String, String> props) {
        return ConnectKeys.toleratesAllErrors(props);
    }

    static ExactlyOnceSupport support(Map<String, String> props) {
        return toleratesAllErrors(props) ? ExactlyOnceSupport.UNSUPPORTED : ExactlyOnceSupport.SUPPORTED;
    }

    static ConnectorTransactionBoundaries transactionBoundaries(Map<String, String> props) {
        return toleratesAllErrors(props) ? ConnectorTransactionBoundaries.UNSUPPORTED
            : ConnectorTransactionBoundaries.SUPPORTED;
    }

    /**
     * When exactly-once is required, or the connector is to define its transactions, and the configuration cannot
     * serve it: the reason, on {@code errors.tolerance} (the key to change). Never a value for
     * {@code exactly.once.support} or {@code transaction.boundary}: a connector's value for a key replaces
     * Connect's own, and Connect's messages there say what the worker supports.
     */
    static void check(Map<String, String> props, Config result) {
        if (ConnectKeys.exactlyOnceAsked(props) && toleratesAllErrors(props)) {
            result.configValues().add(new ConfigValue(ERRORS_TOLERANCE, props.get(ERRORS_TOLERANCE).trim(), List.of(),
                List.of(TOLERANCE_ALL_REASON)));
        }
    }

    /**
     * An operator's change of the committed offsets (a stopped connector, {@code PATCH}/{@code DELETE
     * /connectors/<name>/offsets}): resetting is fine (the rows a last transaction named are produced again),
     * writing a name is not, since a hand-written set could stamp rows that were never delivered.
     *
     * @throws ConnectException for a value that names rows
     */
    static void checkAlteredOffsets(Map<Map<String, ?>, Map<String, ?>> offsets) {
        for (Map.Entry<Map<String, ?>, Map<String, ?>> e : offsets.entrySet()) {
            Map<String, ?> partition = e.getKey();
            Map<String, ?> value = e.getValue();
            if (value == null || partition == null) {
                continue;
            }
            if (partition.containsKey(PendingOffset.SLOT_KEY) || value.containsKey("pending")) {
                throw new ConnectException("Refusing to write the source offset of " + partition + ": it names the"
                    + " rows a task produced and did not stamp, and a task that starts stamps them without producing"
                    + " them, so a hand-written value could mark rows delivered that were never delivered. Reset it"
                    + " instead (DELETE /connectors/<name>/offsets, or a null value): its rows are then produced"
                    + " again if their stamp is missing.");
            }
        }
    }
}
