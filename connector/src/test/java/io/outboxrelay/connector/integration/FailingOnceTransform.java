package io.outboxrelay.connector.integration;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * A transform that fails a record whose row has the header {@code test.fail}: {@code once} fails the first record of
 * each event and lets its retry through, {@code always} fails every one. Under errors.tolerance=all Connect drops
 * the record and acknowledges it with null metadata, which the relay counts as not delivered: its row backs off and
 * is retried (or poisoned at outbox.max.attempts). Stands in for a converter failure that goes away. (Extends
 * {@link ExplodingTransform} for its configuration only.)
 */
public class FailingOnceTransform extends ExplodingTransform {
    /** Event ids failed once already: the worker runs in the test's JVM, and an event id is never reused. */
    private static final Set<String> FAILED = ConcurrentHashMap.newKeySet();

    @Override
    public SourceRecord apply(SourceRecord record) {
        Header fail = record.headers().lastWithName("test.fail");
        if (fail != null && record.value() instanceof Struct s) {
            String id = s.getString("id");
            if ("always".equals(fail.value()) || "once".equals(fail.value()) && FAILED.add(id)) {
                throw new DataException("test: cannot convert event seq " + s.getInt64("seq"));
            }
        }
        return record;
    }
}
