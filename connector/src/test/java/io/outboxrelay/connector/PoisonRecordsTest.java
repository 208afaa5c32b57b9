package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

class PoisonRecordsTest {

    /**
     * A row poisoned for a NULL id, type or subject (a column changed to allow it after validation) is described
     * all the same: before, its record failed the task with a DataException, and the record was lost.
     */
    @Test
    void aRowWithNullFieldsIsDescribedWithEmptyOnes() {
        PoisonRecords records = new PoisonRecords("outbox.poison", "events");
        records.add(List.of(new PoisonedRow(7, null, null, null, 1, 1_000, 2_000, "id is NULL"),
            new PoisonedRow(8, "id-8", "order.created", "o-8", 5, 1_000, 2_000, "claimed 6 times")));

        List<SourceRecord> out = records.drain();

        assertThat(out).hasSize(2);
        Struct nulls = (Struct) out.get(0).value();
        nulls.validate();
        assertThat(nulls.getString("id")).isEmpty();
        assertThat(nulls.getString("type")).isEmpty();
        assertThat(nulls.getString("subject")).isEmpty();
        assertThat(nulls.getString("reason")).isEqualTo("id is NULL");
        assertThat(out.get(0).key()).isEqualTo("");
        assertThat(((Struct) out.get(1).value()).getString("subject")).isEqualTo("o-8");
        assertThat(out.get(1).key()).isEqualTo("o-8");
        assertThat(records.drain()).as("described once").isEmpty();
    }
}
