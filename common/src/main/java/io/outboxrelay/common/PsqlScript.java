package io.outboxrelay.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * Turns a psql script of this project ({@code schemas/sql/*.sql}) into plain SQL one JDBC statement can
 * run, for the places that apply it without a psql binary (the quickstart, the benchmark, the tests).
 * It does what psql does for exactly the constructs those files use, and refuses anything else:
 * <ul>
 *   <li>the meta-commands {@code \if :{?name}}, {@code \else}, {@code \endif} and {@code \set name value}
 *       (one unquoted word), on lines of their own;</li>
 *   <li>{@code \ir file} (psql's include relative to the including file's folder; with the same variables,
 *       as psql shares them), when the script is rendered from a file;</li>
 *   <li>{@code :'name'} (a string literal, escaped like psql's) and {@code :"name"} (a quoted identifier),
 *       outside quotes, dollar quotes and comments, where psql leaves them alone too.</li>
 * </ul>
 * Variables are what {@code psql -v name=value} would set.
 */
public final class PsqlScript {
    private PsqlScript() {
    }

    /** The file's SQL with {@code variables} applied as {@code psql -v} would. */
    public static String render(Path file, Map<String, String> variables) {
        return renderFile(file, new HashMap<>(variables), 0);
    }

    public static String render(String script, Map<String, String> variables) {
        return render(script, new HashMap<>(variables), null, 0);
    }

    private static String renderFile(Path file, Map<String, String> vars, int depth) {
        try {
            return render(Files.readString(file, StandardCharsets.UTF_8), vars, file.toAbsolutePath().getParent(),
                depth);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** {@code folder} is where {@code \ir} looks, null when the script is no file (then {@code \ir} is refused). */
    private static String render(String script, Map<String, String> vars, Path folder, int depth) {
        Deque<Boolean> branches = new ArrayDeque<>(); // per open \if: whether its current branch runs
        Scanner scanner = new Scanner();
        StringBuilder out = new StringBuilder();
        int lineNo = 0;
        for (String line : script.split("\n", -1)) {
            lineNo++;
            String trimmed = line.strip();
            if (scanner.atTopLevel() && trimmed.startsWith("\\ir ") && folder != null) {
                if (!branches.contains(Boolean.FALSE)) {
                    out.append(include(folder, trimmed.substring(4).strip(), vars, depth, lineNo));
                }
                out.append('\n');
                continue;
            }
            if (scanner.atTopLevel() && trimmed.startsWith("\\")) {
                meta(trimmed, vars, branches, lineNo);
                out.append('\n'); // keeps line numbers in the server's error positions roughly right
                continue;
            }
            if (branches.contains(Boolean.FALSE)) {
                out.append('\n');
                continue;
            }
            out.append(scanner.interpolate(line, vars, lineNo)).append('\n');
        }
        if (!branches.isEmpty()) {
            throw new IllegalArgumentException("\\if without \\endif");
        }
        return out.substring(0, out.length() - 1);
    }

    private static String include(Path folder, String name, Map<String, String> vars, int depth, int lineNo) {
        if (!name.matches("[\\w.-]+") || depth >= 8) {
            throw new IllegalArgumentException("line " + lineNo + ": \\ir of a plain file name in the same folder only,"
                + " nested at most 8 deep: " + name);
        }
        return renderFile(folder.resolve(name), vars, depth + 1);
    }

    private static void meta(String command, Map<String, String> vars, Deque<Boolean> branches, int lineNo) {
        String[] words = command.split("\\s+");
        boolean running = !branches.contains(Boolean.FALSE);
        switch (words[0]) {
            case "\\if" -> {
                if (words.length != 2 || !words[1].matches(":\\{\\?\\w+}")) {
                    throw unsupported(command, lineNo);
                }
                branches.push(vars.containsKey(words[1].substring(3, words[1].length() - 1)));
            }
            case "\\else" -> {
                if (branches.isEmpty()) {
                    throw new IllegalArgumentException("line " + lineNo + ": \\else without \\if");
                }
                branches.push(!branches.pop());
            }
            case "\\endif" -> {
                if (branches.isEmpty()) {
                    throw new IllegalArgumentException("line " + lineNo + ": \\endif without \\if");
                }
                branches.pop();
            }
            case "\\set" -> {
                if (words.length != 3 || !words[1].matches("\\w+") || words[2].matches(".*['\":`\\\\].*")) {
                    throw unsupported(command, lineNo);
                }
                if (running) {
                    vars.put(words[1], words[2]);
                }
            }
            default -> throw unsupported(command, lineNo);
        }
    }

    private static IllegalArgumentException unsupported(String command, int lineNo) {
        return new IllegalArgumentException("line " + lineNo + ": psql meta-command not supported here: " + command);
    }

    /** psql's {@code :'name'}: PQescapeLiteral's form, with an E prefix when there are backslashes. */
    static String literal(String value) {
        String body = value.replace("'", "''");
        return body.contains("\\") ? "E'" + body.replace("\\", "\\\\") + "'" : "'" + body + "'";
    }

    /** psql's {@code :"name"}. */
    static String identifier(String value) {
        return '"' + value.replace("\"", "\"\"") + '"';
    }

    /** Tracks quotes and comments across lines, so that variables are interpolated only where psql does. */
    private static final class Scanner {
        private char quote; // 0, '\'' or '"'
        private String dollarTag; // the open $tag$, or null
        private int blockComments;

        boolean atTopLevel() {
            return quote == 0 && dollarTag == null && blockComments == 0;
        }

        String interpolate(String line, Map<String, String> vars, int lineNo) {
            StringBuilder out = new StringBuilder(line.length());
            int i = 0;
            while (i < line.length()) {
                char c = line.charAt(i);
                if (quote != 0) {
                    if (c == quote) {
                        quote = 0;
                    }
                } else if (dollarTag != null) {
                    if (line.startsWith(dollarTag, i)) {
                        out.append(dollarTag);
                        i += dollarTag.length();
                        dollarTag = null;
                        continue;
                    }
                } else if (blockComments > 0) {
                    if (line.startsWith("*/", i)) {
                        blockComments--;
                        out.append("*/");
                        i += 2;
                        continue;
                    }
                    if (line.startsWith("/*", i)) {
                        blockComments++;
                        out.append("/*");
                        i += 2;
                        continue;
                    }
                } else if (line.startsWith("--", i)) {
                    return out.append(line, i, line.length()).toString();
                } else if (line.startsWith("/*", i)) {
                    blockComments++;
                    out.append("/*");
                    i += 2;
                    continue;
                } else if (c == '\'' || c == '"') {
                    quote = c;
                } else if (c == '$' && dollarTagAt(line, i) != null) {
                    dollarTag = dollarTagAt(line, i);
                    out.append(dollarTag);
                    i += dollarTag.length();
                    continue;
                } else if (c == ':' && i + 1 < line.length() && (line.charAt(i + 1) == '\'' || line.charAt(i + 1) == '"')) {
                    char kind = line.charAt(i + 1);
                    int end = line.indexOf(kind, i + 2);
                    String name = end < 0 ? "" : line.substring(i + 2, end);
                    if (name.matches("\\w+")) {
                        String value = vars.get(name);
                        if (value == null) {
                            throw new IllegalArgumentException("line " + lineNo + ": variable " + name + " is not set");
                        }
                        out.append(kind == '\'' ? literal(value) : identifier(value));
                        i = end + 1;
                        continue;
                    }
                }
                out.append(c);
                i++;
            }
            return out.toString();
        }

        /** The dollar-quote opening tag at {@code i} ({@code $$} or {@code $name$}), or null. */
        private static String dollarTagAt(String line, int i) {
            if (i > 0 && (Character.isLetterOrDigit(line.charAt(i - 1)) || line.charAt(i - 1) == '_')) {
                return null; // part of an identifier such as a$b
            }
            int j = i + 1;
            while (j < line.length() && (Character.isLetterOrDigit(line.charAt(j)) || line.charAt(j) == '_')) {
                j++;
            }
            if (j < line.length() && line.charAt(j) == '$' && (j == i + 1 || !Character.isDigit(line.charAt(i + 1)))) {
                return line.substring(i, j + 1);
            }
            return null;
        }
    }
}
