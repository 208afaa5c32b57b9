package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outboxrelay.common.ConnectionConfigKeys;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The mention keys: contract names and defaults, full metadata, and parsing the connector's props. */
class MentionRecoveryConfigTest {
    private static final List<String> KEYS = List.of("mentions.enabled", "mentions.topic", "mentions.batch.size",
        "mentions.min.age.ms", "mentions.scan.interval.ms", "mentions.session.live.ms", "mentions.notify.channel");

    @Test
    void usesTheContractDefaults() {
        MentionRecoveryConfig config = new MentionRecoveryConfig(Map.of("connection.url", "jdbc:postgresql://db/app"));

        assertThat(config.enabled()).isFalse();
        assertThat(config.topic()).isEqualTo("mentions.recovered");
        assertThat(config.batchSize()).isEqualTo(200);
        assertThat(config.minAge()).isEqualTo(Duration.ofSeconds(30));
        assertThat(config.scanInterval()).isEqualTo(Duration.ofSeconds(60));
        assertThat(config.sessionLive()).isEqualTo(Duration.ofSeconds(60));
        assertThat(config.notifyChannel()).contains("mentions_recovery");
    }

    @Test
    void definesEveryKeyWithFullMetadataInItsGroup() {
        ConfigDef def = MentionRecoveryConfig.addTo(new ConfigDef());

        assertThat(def.names()).containsExactlyInAnyOrderElementsOf(KEYS);
        int order = 0;
        for (String key : KEYS) {
            ConfigDef.ConfigKey k = def.configKeys().get(key);
            assertThat(k.group).as(key).isEqualTo("Mention recovery");
            assertThat(k.orderInGroup).as(key).isEqualTo(++order);
            assertThat(k.documentation).as(key).isNotBlank();
            assertThat(k.displayName).as(key).isNotBlank();
            assertThat(k.width).as(key).isNotEqualTo(ConfigDef.Width.NONE);
            assertThat(k.hasDefault()).as(key).isTrue();
        }
    }

    @Test
    void includesTheConnectionKeysInItsOwnDefinition() {
        assertThat(MentionRecoveryConfig.CONFIG_DEF.names())
            .contains(ConnectionConfigKeys.URL, ConnectionConfigKeys.PASSWORD).containsAll(KEYS);
    }

    @Test
    void parsesTheConnectorsFullPropsIgnoringTheRelayKeys() {
        Map<String, String> props = MentionRecoveryTaskTest.connectorProps();
        props.put("mentions.batch.size", "50");

        MentionRecoveryConfig config = new MentionRecoveryConfig(props);

        assertThat(config.enabled()).isTrue();
        assertThat(config.batchSize()).isEqualTo(50);
        assertThat(config.connectorSetting("errors.tolerance")).isEqualTo("none");
        assertThat(config.connectionSettings().applicationName()).isEqualTo("outbox-relay-mentions");
        assertThat(config.connectionSettings().toString()).doesNotContain("secret");
    }

    @Test
    void disablesListenWithAnEmptyChannel() {
        MentionRecoveryConfig config = new MentionRecoveryConfig(
            Map.of("connection.url", "jdbc:postgresql://db/app", "mentions.notify.channel", ""));

        assertThat(config.notifyChannel()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Mentions", "mentions-recovery", "app.mentions", "1abc", "x; DROP TABLE messages"})
    void refusesAChannelThatIsNotALowerCaseIdentifier(String channel) {
        assertThatThrownBy(() -> new MentionRecoveryConfig(
            Map.of("connection.url", "jdbc:postgresql://db/app", "mentions.notify.channel", channel)))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("mentions.notify.channel");
    }

    @ParameterizedTest
    @ValueSource(strings = {"mentions.batch.size=0", "mentions.min.age.ms=-1", "mentions.scan.interval.ms=0",
        "mentions.session.live.ms=0", "mentions.topic="})
    void refusesOutOfRangeValues(String setting) {
        String[] kv = setting.split("=", 2);

        assertThatThrownBy(() -> new MentionRecoveryConfig(Map.of("connection.url", "jdbc:postgresql://db/app", kv[0], kv[1])))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining(kv[0]);
    }
}
