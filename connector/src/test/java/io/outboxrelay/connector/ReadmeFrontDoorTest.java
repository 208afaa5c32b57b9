package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README is the project's front door (issue 26): it opens with the two commands a newcomer runs, the
 * second being exactly what CI runs, and it stays short enough to read, linking the rest.
 */
class ReadmeFrontDoorTest {
    private static final Pattern FIRST_BLOCK = Pattern.compile("(?s)```bash\\n(.*?)\\n```");

    @Test
    void opensWithTheQuickstartAndTheTestCommandThatCiRuns() throws IOException {
        Path root = ProjectFiles.root();
        String readme = Files.readString(root.resolve("README.md"));
        Matcher m = FIRST_BLOCK.matcher(readme);
        assertThat(m.find()).as("a bash block at the top of README.md").isTrue();
        List<String> commands = m.group(1).lines().map(l -> l.replaceAll("\\s+#.*$", "").trim()).toList();
        assertThat(readme.substring(0, m.start()).lines().count()).as("lines before the two commands").isLessThan(10);
        assertThat(commands).as("the README's first commands").hasSize(2);
        assertThat(commands.get(0)).isEqualTo("./quickstart.sh");
        List<String> ci = Files.readAllLines(root.resolve(".ci").resolve("run")).stream()
            .map(String::trim).filter(l -> l.startsWith("./mvnw")).toList();
        assertThat(ci).as(".ci/run runs the README's test command, and only it").containsExactly(commands.get(1));
    }

    @Test
    void staysShortAndLinksTheRest() throws IOException {
        List<String> lines = Files.readAllLines(ProjectFiles.root().resolve("README.md"));
        assertThat(lines).as("README.md lines: move detail to docs/ and link it").hasSizeLessThan(300);
        assertThat(String.join("\n", lines)).contains("](docs/configuration.md)", "](docs/guarantees.md)",
            "](docs/row-lifecycle.md)", "](docs/operations.md)", "](docs/failover.md)", "](bench/README.md)");
    }
}
