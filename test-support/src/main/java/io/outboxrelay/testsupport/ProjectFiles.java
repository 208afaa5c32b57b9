package io.outboxrelay.testsupport;

import java.nio.file.Files;
import java.nio.file.Path;

/** Files of the repository a test reads (schemas, config examples, docs), found from any module. */
public final class ProjectFiles {
    private ProjectFiles() {
    }

    /** The repository root: the first directory at or above the working directory with schemas/sql and a pom.xml. */
    public static Path root() {
        Path start = Path.of("").toAbsolutePath();
        for (Path p = start; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("schemas").resolve("sql")) && Files.exists(p.resolve("pom.xml"))) {
                return p;
            }
        }
        throw new IllegalStateException("the project root (with schemas/sql) is not above " + start);
    }

    /** A file under the repository's {@code schemas/sql}. */
    public static Path schemaFile(String name) {
        return root().resolve("schemas").resolve("sql").resolve(name);
    }
}
