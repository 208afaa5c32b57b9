package io.outboxrelay.connector.integration;

import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;

/** A transform that fails on events of type {@code test.explode}: stands in for a converter failure. */
public class ExplodingTransform implements Transformation<SourceRecord> {
    @Override
    public SourceRecord apply(SourceRecord record) {
        if (record.value() instanceof Struct s && "test.explode".equals(s.getString("type"))) {
            throw new DataException("cannot convert event " + s.getInt64("seq"));
        }
        return record;
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }

    @Override
    public void close() {
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }
}
