package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README is a front door: what it does not say itself it links to, in {@code docs/}, the modules'
 * READMEs and {@code bench/}. Pages move; this keeps every relative link of every Markdown file of the
 * repository pointing at a file that exists and, when the link names a heading ({@code page.md#heading}),
 * at a heading that exists, as GitHub builds its anchors. The row-lifecycle diagram is drawn once
 * ({@code docs/row-lifecycle.md}); the README may show it, but only as that same drawing.
 */
class DocLinksTest {
    /** A Markdown inline link or image: {@code [text](target)} or {@code [text](target "title")}. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*#*\\s*$");
    private static final Pattern FENCE = Pattern.compile("(?ms)^\\s*```.*?^\\s*```\\s*$");
    private static final Pattern STATE_DIAGRAM = Pattern.compile("(?ms)^```mermaid\\s*\\nstateDiagram.*?^```");

    @Test
    void everyRelativeLinkOfTheRepositorysMarkdownResolves() {
        Path root = ProjectFiles.root();
        List<Path> docs = markdownFiles(root);
        assertThat(docs).contains(root.resolve("README.md"), root.resolve("docs").resolve("configuration.md"));
        List<String> broken = brokenLinks(root, docs);
        assertThat(broken).as("links to a file or heading that does not exist").isEmpty();
        assertThat(relativeLinks(root.resolve("README.md"))).as("relative links in README.md").hasSizeGreaterThan(15);
    }

    @Test
    void aLinkToAMissingFileOrHeadingIsReported(@TempDir Path dir) throws IOException {
        Files.createDirectories(dir.resolve("docs"));
        Files.writeString(dir.resolve("docs").resolve("page.md"), "# A page\n\n## Its `second` part\n\n## Its `second` part\n");
        Files.writeString(dir.resolve("README.md"), String.join("\n",
            "[fine](docs/page.md), [fine too](docs/page.md#its-second-part), [again](docs/page.md#its-second-part-1),",
            "[a folder](docs/), [web](https://example.org/x.md), [here](#top-heading)",
            "# Top heading",
            "```", "[inside code](nowhere.md)", "```",
            "[gone](docs/moved.md) and [no such part](docs/page.md#operations) and [not here](#operations)"));
        assertThat(brokenLinks(dir, markdownFiles(dir))).containsExactly(
            "README.md -> docs/moved.md", "README.md -> docs/page.md#operations", "README.md -> #operations");
    }

    @Test
    void theRowLifecycleIsDrawnOnceAndTheReadmeShowsThatSameDrawing() throws IOException {
        Path root = ProjectFiles.root();
        List<String> lifecycle = stateDiagrams(Files.readString(root.resolve("docs").resolve("row-lifecycle.md")));
        assertThat(lifecycle).as("docs/row-lifecycle.md draws the row lifecycle").hasSize(1);
        List<String> inReadme = stateDiagrams(Files.readString(root.resolve("README.md")));
        assertThat(inReadme).as("README.md shows no row-lifecycle drawing of its own").allMatch(lifecycle::contains);
    }

    private static List<String> stateDiagrams(String md) {
        List<String> out = new ArrayList<>();
        Matcher m = STATE_DIAGRAM.matcher(md);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    /** Every {@code *.md} of the tree but build output and hidden folders. */
    private static List<Path> markdownFiles(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(".md") && Files.isRegularFile(p))
                .filter(p -> root.relativize(p).toString().replace('\\', '/').matches("(?!.*(^|/)(target|\\.[^/]+)/).*"))
                .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> brokenLinks(Path root, List<Path> docs) {
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        for (Path doc : docs) {
            for (String target : relativeLinks(doc)) {
                int hash = target.indexOf('#');
                String path = hash >= 0 ? target.substring(0, hash) : target;
                Path file = path.isEmpty() ? doc : doc.resolveSibling(path).normalize();
                boolean found = Files.exists(file);
                if (found && hash >= 0 && file.toString().endsWith(".md")) {
                    found = anchors.computeIfAbsent(file, DocLinksTest::anchorsOf).contains(target.substring(hash + 1));
                }
                if (!found) {
                    broken.add(root.relativize(doc).toString().replace('\\', '/') + " -> " + target);
                }
            }
        }
        return broken;
    }

    /** The link targets of a page that are neither absolute URLs nor inside code blocks. */
    private static List<String> relativeLinks(Path doc) {
        Matcher m = LINK.matcher(FENCE.matcher(read(doc)).replaceAll(""));
        List<String> out = new ArrayList<>();
        while (m.find()) {
            String target = m.group(1);
            if (!target.matches("^[a-zA-Z][a-zA-Z+.-]*:.*")) {
                out.add(target);
            }
        }
        return out;
    }

    /** GitHub's heading anchors: lower case, punctuation but '-' and '_' dropped, spaces as '-', repeats numbered. */
    private static Set<String> anchorsOf(Path doc) {
        Set<String> out = new HashSet<>();
        for (String line : FENCE.matcher(read(doc)).replaceAll("").split("\n")) {
            Matcher h = HEADING.matcher(line);
            if (h.matches()) {
                String slug = h.group(1).toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
                String anchor = slug;
                for (int n = 1; !out.add(anchor); n++) {
                    anchor = slug + "-" + n;
                }
            }
        }
        return out;
    }

    private static String read(Path doc) {
        try {
            return Files.readString(doc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
