package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

/** The connector's synchronous_commit: off by default, on when unset on a connector that asks for exactly-once. */
class ConnectionConfigKeysTest {
    private static String synchronousCommit(Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(Map.of(ConnectionConfigKeys.URL, "jdbc:postgresql://db:5432/app"));
        props.putAll(extra);
        AbstractConfig config = new AbstractConfig(ConnectionConfigKeys.addTo(new ConfigDef()), props, false);
        return ConnectionConfigKeys.settings(config, "test").synchronousCommit();
    }

    @Test
    void unsetItIsOffUnlessTheConnectorAsksForExactlyOnce() {
        assertThat(synchronousCommit(Map.of())).isEqualTo("off");
        assertThat(synchronousCommit(Map.of("exactly.once.support", "requested"))).isEqualTo("off");
        assertThat(synchronousCommit(Map.of("transaction.boundary", "poll"))).isEqualTo("off");
        assertThat(synchronousCommit(Map.of("exactly.once.support", " Required "))).isEqualTo("on");
        assertThat(synchronousCommit(Map.of("transaction.boundary", "connector"))).isEqualTo("on");
    }

    @Test
    void setItIsWhatItSaysWhateverTheConnectorAsksFor() {
        assertThat(synchronousCommit(Map.of("exactly.once.support", "required",
            ConnectionConfigKeys.SYNCHRONOUS_COMMIT, "off"))).isEqualTo("off");
        assertThat(synchronousCommit(Map.of(ConnectionConfigKeys.SYNCHRONOUS_COMMIT, "remote_apply")))
            .isEqualTo("remote_apply");
    }
}
