package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The SQL the relay, the mention task and their shared plumbing run lives in {@code .sql} files of named
 * statements, and every SQLState they act on is named in {@code SqlStates}: this scan of the main sources
 * fails on a Java string that is a statement, a JDBC call given a literal, or a raw SQLState.
 */
class NoInlineSqlTest {
    private static final List<String> MAIN_SOURCES = List.of("connector/src/main/java", "common/src/main/java",
        "mention-recovery-task/src/main/java");
    /** The one class allowed to spell SQLStates. */
    private static final String SQL_STATES = "SqlStates.java";
    /** What the code could run: a literal that starts, in capitals, with one of these is a statement. */
    private static final Pattern STATEMENT = Pattern.compile("(?s)(SELECT|WITH|INSERT|UPDATE|DELETE|MERGE|SET|SHOW"
        + "|RESET|LISTEN|UNLISTEN|NOTIFY|CALL|DO|LOCK|COPY|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|EXPLAIN|TRUNCATE|VACUUM"
        + "|ANALYZE)(\\s.*|;.*|)");
    /**
     * Messages and display names that start like a statement and are prose ("LISTEN disabled"). A new one goes
     * here only when it is not SQL the code runs.
     */
    private static final Set<String> PROSE = Set.of("LISTEN enabled", "LISTEN ", "LISTEN disabled", "NOTIFY channel",
        "LISTEN channel that triggers a scan (the server sends NOTIFY at its own recovery points). ");
    private static final Pattern JDBC_CALL_WITH_LITERAL = Pattern.compile(
        "\\.(prepareStatement|prepareCall|executeQuery|executeUpdate|executeLargeUpdate|execute|addBatch|nativeSQL)"
            + "\\(\\s*\"");
    /** Five characters of digits and capitals, at least one a digit: 42P01, 08006, 57014. */
    private static final Pattern SQL_STATE = Pattern.compile("(?=.*[0-9])[0-9A-Z]{5}");
    /** A class of SQLStates by its first two characters: startsWith("08"). */
    private static final Pattern STATE_CLASS = Pattern.compile("startsWith\\(\\s*\"[0-9A-Z]{2}\"\\s*\\)");

    @Test
    void mainSourcesHoldNoStatementNoJdbcCallWithALiteralAndNoRawSqlState() {
        List<String> found = new ArrayList<>();
        for (Path file : mainJavaFiles()) {
            found.addAll(problems(file.getFileName().toString(), read(file)));
        }
        assertThat(found).as("move SQL to the module's .sql file (NamedSql) and SQLStates to SqlStates").isEmpty();
    }

    /** The other half of the rule: every named statement of the modules' .sql files is one the code runs. */
    @Test
    void everyNamedStatementIsNamedInTheCode() {
        Set<String> literals = new HashSet<>();
        for (Path file : mainJavaFiles()) {
            literals.addAll(literals(read(file), new StringBuilder()));
        }
        List<String> names = new ArrayList<>();
        for (Path file : mainSqlFiles()) {
            for (String line : read(file).split("\n")) {
                if (line.startsWith("-- name:")) {
                    names.add(file.getFileName() + ": " + line.substring("-- name:".length()).strip());
                }
            }
        }
        assertThat(names).as("the statements were found").hasSizeGreaterThan(20);
        assertThat(names).as("statements no code names")
            .filteredOn(n -> !literals.contains(n.substring(n.indexOf(": ") + 2))).isEmpty();
    }

    /** The negative control: what the scan must catch, next to what it must let through. */
    @Test
    void theScanCatchesEachKindOfInlineSqlAndLetsMessagesThrough() {
        assertThat(problems("A.java", "class A { void f(Connection c) { c.prepareStatement(\"SELECT 1\"); } }"))
            .hasSize(2);
        assertThat(problems("A.java", "class A { static final String Q = \"UPDATE events SET x = 1\"; }")).hasSize(1);
        assertThat(problems("A.java", "class A { String q = \"\"\"\n    WITH x AS (SELECT 1) SELECT * FROM x\"\"\"; }"))
            .hasSize(1);
        assertThat(problems("A.java", "class A { void f(Statement st, String ch) { st.execute(\"LISTEN \" + ch); } }"))
            .as("a JDBC call given a literal, whatever it says").isNotEmpty();
        assertThat(problems("A.java", "class A { boolean f(SQLException e) { return \"42501\".equals(e.getSQLState());"
            + " } }")).hasSize(1);
        assertThat(problems("A.java", "class A { boolean f(String s) { return s.startsWith(\"08\"); } }")).hasSize(1);
        assertThat(problems("SqlStates.java", "class SqlStates { static final String X = \"42501\"; }")).isEmpty();
        assertThat(problems("A.java", "class A { // SELECT 1 FROM t, SQLState 42501\n"
            + " String m = \"role may not DELETE: GRANT DELETE ON t\"; String d = \"LISTEN disabled\";"
            + " /* prepareStatement(\"SELECT 1\") */ char q = '\"'; String u = \"UTF-8\"; }")).isEmpty();
    }

    private static List<String> problems(String fileName, String source) {
        List<String> out = new ArrayList<>();
        StringBuilder code = new StringBuilder();
        for (String literal : literals(source, code)) {
            if (STATEMENT.matcher(literal).matches() && !PROSE.contains(literal) && !literal.contains("{}")) {
                out.add(fileName + ": SQL in a Java string: \"" + literal + "\"");
            }
            if (SQL_STATE.matcher(literal).matches() && !fileName.equals(SQL_STATES)) {
                out.add(fileName + ": a raw SQLState: \"" + literal + "\"");
            }
        }
        JDBC_CALL_WITH_LITERAL.matcher(code).results()
            .forEach(m -> out.add(fileName + ": a JDBC call given a literal: " + m.group()));
        if (!fileName.equals(SQL_STATES)) {
            STATE_CLASS.matcher(code).results()
                .forEach(m -> out.add(fileName + ": a raw SQLState class: " + m.group()));
        }
        return out;
    }

    /**
     * The string literals (text blocks included) of a Java source; {@code code} receives the source without
     * comments, each literal's text kept so that the patterns over the code see it.
     */
    private static List<String> literals(String src, StringBuilder code) {
        List<String> out = new ArrayList<>();
        int i = 0;
        while (i < src.length()) {
            char c = src.charAt(i);
            if (src.startsWith("//", i)) {
                i = src.indexOf('\n', i) < 0 ? src.length() : src.indexOf('\n', i);
            } else if (src.startsWith("/*", i)) {
                i = src.indexOf("*/", i + 2) < 0 ? src.length() : src.indexOf("*/", i + 2) + 2;
            } else if (src.startsWith("\"\"\"", i)) {
                int end = src.indexOf("\"\"\"", i + 3);
                String text = src.substring(src.indexOf('\n', i) + 1, end).stripIndent().strip();
                out.add(text);
                code.append("\"\"\"").append(text).append("\"\"\"");
                i = end + 3;
            } else if (c == '"' || c == '\'') {
                StringBuilder text = new StringBuilder();
                int j = i + 1;
                while (src.charAt(j) != c) {
                    if (src.charAt(j) == '\\') {
                        j++;
                    }
                    text.append(src.charAt(j++));
                }
                if (c == '"') {
                    out.add(text.toString());
                }
                code.append(c).append(text).append(c);
                i = j + 1;
            } else {
                code.append(c);
                i++;
            }
        }
        return out;
    }

    private static List<Path> mainJavaFiles() {
        Path root = ProjectFiles.root();
        List<Path> files = new ArrayList<>();
        for (String dir : MAIN_SOURCES) {
            try (Stream<Path> walk = Files.walk(root.resolve(dir))) {
                walk.filter(p -> p.toString().endsWith(".java")).forEach(files::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        assertThat(files).as("the main sources were found").hasSizeGreaterThan(50);
        return files;
    }

    private static List<Path> mainSqlFiles() {
        List<Path> files = new ArrayList<>();
        for (String dir : MAIN_SOURCES) {
            try (Stream<Path> walk = Files.walk(ProjectFiles.root().resolve(dir).resolveSibling("resources"))) {
                walk.filter(p -> p.toString().endsWith(".sql")).forEach(files::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return files;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
