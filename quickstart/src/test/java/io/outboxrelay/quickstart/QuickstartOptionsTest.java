package io.outboxrelay.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QuickstartOptionsTest {

    @Test
    void runsUntilCtrlCAt200EventsPerSecondByDefault() {
        QuickstartOptions o = QuickstartOptions.parse();
        assertThat(o.duration()).isNull();
        assertThat(o.eventsPerSecond()).isEqualTo(200);
        assertThat(o.home().resolve(QuickstartOptions.TEMPLATE)).exists();
    }

    @Test
    void readsDurationAndRate() {
        QuickstartOptions o = QuickstartOptions.parse("--duration=30", "--rate=1000");
        assertThat(o.duration()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.eventsPerSecond()).isEqualTo(1000);
    }

    @Test
    void rejectsWhatItDoesNotUnderstandWithTheArgumentNamed() {
        assertThatThrownBy(() -> QuickstartOptions.parse("--duration=soon")).hasMessageContaining("--duration")
            .hasMessageContaining("soon");
        assertThatThrownBy(() -> QuickstartOptions.parse("--rate=0")).hasMessageContaining("--rate");
        assertThatThrownBy(() -> QuickstartOptions.parse("--verbose")).hasMessageContaining("--verbose");
    }

    @Test
    void fillsTheQuickstartVariablesAndLeavesConfigProviderReferencesToTheWorker(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("c.json");
        Files.writeString(file, "{\"connection.url\": \"${DB_URL}?ssl=true\", "
            + "\"connection.password\": \"${file:/etc/secrets.properties:password}\", \"tasks.max\": \"2\"}");

        Map<String, String> config = ConnectorTemplate.load(file, Map.of("DB_URL", "jdbc:postgresql://db/app"));

        assertThat(config).containsEntry("connection.url", "jdbc:postgresql://db/app?ssl=true")
            .containsEntry("connection.password", "${file:/etc/secrets.properties:password}")
            .containsEntry("tasks.max", "2");
    }

    @Test
    void namesAnUnknownVariable(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("c.json");
        Files.writeString(file, "{\"connection.user\": \"${DB_USER}\"}");
        assertThatThrownBy(() -> ConnectorTemplate.load(file, Map.of("DB_URL", "x")))
            .hasMessageContaining("${DB_USER}").hasMessageContaining("connection.user");
    }

    @Test
    void theQuickstartConfigRunsTheMentionTaskBesideTwoRelayTasks() {
        Map<String, String> config = ConnectorTemplate.load(
            QuickstartOptions.parse().home().resolve(QuickstartOptions.TEMPLATE),
            Map.of("QUICKSTART_DB_URL", "jdbc:postgresql://localhost/postgres", "QUICKSTART_DB_USER", "relay",
                "QUICKSTART_SECRETS", "/tmp/secrets.properties"));
        assertThat(Quickstart.expectedTasks(config, true)).isEqualTo(3);
        assertThat(config.get("connection.password")).as("a reference the worker resolves, never the password")
            .isEqualTo("${file:/tmp/secrets.properties:connection.password}");
    }
}
