package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/configuration.md} is generated from the ConfigDef; a key added, renamed or re-documented
 * without regenerating it fails here, with the command that regenerates it.
 */
class ConfigReferenceTest {

    @Test
    void checkedInReferenceIsUpToDate() throws IOException {
        Path file = docsFile();
        String expected = ConfigReference.render();
        assertThat(file).as("docs/configuration.md is missing; generate it with: " + ConfigReference.COMMAND).exists();
        assertThat(Files.readString(file))
            .as("docs/configuration.md is stale; regenerate it from the repository root with:%n  %s%n",
                ConfigReference.COMMAND)
            .isEqualTo(expected);
    }

    @Test
    void referenceListsEveryKeyOfTheContractIncludingThePerSubscriptionOnes() {
        String md = ConfigReference.render();
        for (String key : new String[] {"connection.url", "connection.password", "outbox.table", "outbox.batch.size",
            "outbox.lease.ms", "outbox.max.attempts", "outbox.listen.enabled", "outbox.poison.topic", "subscriptions",
            "subscription.<name>.topic", "subscription.<name>.event.types", "subscription.<name>.coalesce",
            "mentions.enabled", "mentions.topic", "mentions.min.age.ms"}) {
            assertThat(md).contains("| `" + key + "` |");
        }
        assertThat(md).doesNotContain("__name__");
    }

    private static Path docsFile() {
        return ProjectFiles.root().resolve(ConfigReference.FILE);
    }
}
