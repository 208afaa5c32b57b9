package io.outboxrelay.connector;

import io.outboxrelay.mentions.MentionRecoveryTask;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * The task class of {@link OutboxSourceConnector}. Connect runs one task class per connector, so this
 * one runs either a relay task or, for the task the connector marks {@code task.kind=mentions}, the
 * mention-recovery companion task.
 */
public class OutboxSourceTask extends SourceTask {
    private SourceTask delegate;

    @Override
    public String version() {
        return Version.get();
    }

    @Override
    public void start(Map<String, String> props) {
        String kind = OutboxSourceTaskConfig.kind(props);
        delegate = OutboxSourceTaskConfig.KIND_MENTIONS.equals(kind) ? new MentionRecoveryTask() : new OutboxRelayTask();
        delegate.initialize(context);
        delegate.start(props);
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        return delegate.poll();
    }

    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) throws InterruptedException {
        delegate.commitRecord(record, metadata);
    }

    @Override
    public void commit() throws InterruptedException {
        delegate.commit();
    }

    @Override
    public void stop() {
        if (delegate != null) {
            delegate.stop();
        }
    }

    SourceTask delegate() {
        return delegate;
    }
}
