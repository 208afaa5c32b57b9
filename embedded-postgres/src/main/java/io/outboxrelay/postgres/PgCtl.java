package io.outboxrelay.postgres;

import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code pg_ctl} of a running server's own binaries, on one data directory, run as zonky runs it: under
 * {@code unshare -U} when that is available (PostgreSQL refuses to run as root), with its output appended to a
 * log file. The server options of the first start come from {@code postmaster.opts}, so a restart gets the
 * same port and settings.
 */
final class PgCtl {
    private static final Pattern QUOTED = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");

    private final Path binary;
    private final Path dataDir;
    private final String serverOptions;
    private final Path log;

    PgCtl(Path binary, Path dataDir, String serverOptions, Path log) {
        this.binary = binary;
        this.dataDir = dataDir;
        this.serverOptions = serverOptions;
        this.log = log;
    }

    /** The {@code pg_ctl} next to the {@code postgres} binary running on {@code dataDir}, with its start options. */
    static PgCtl of(Path dataDir, Path log) {
        try {
            long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
            Path postgresBinary = Path.of("/proc/" + pid + "/exe").toRealPath();
            return new PgCtl(postgresBinary.resolveSibling("pg_ctl"), dataDir,
                serverOptions(Files.readString(dataDir.resolve("postmaster.opts"))), log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find pg_ctl of the server in " + dataDir, e);
        }
    }

    /** The same binaries and options on another data directory and port (a standby). */
    PgCtl forCopy(Path otherDataDir, int fromPort, int toPort, Path otherLog) {
        return new PgCtl(binary, otherDataDir, serverOptions.replace("'-p' '" + fromPort + "'", "'-p' '" + toPort + "'"),
            otherLog);
    }

    Path log() {
        return log;
    }

    void start() {
        run(List.of("-D", dataDir.toString(), "-o", serverOptions, "-l", log.toString(), "-w", "-t", "60", "start"));
    }

    /** {@code -m immediate}: every backend dies at once, no checkpoint; {@code -m fast}: a clean shutdown. */
    void stop(String mode) {
        run(List.of("-D", dataDir.toString(), "-m", mode, "-w", "-t", "60", "stop"));
    }

    void promote() {
        run(List.of("-D", dataDir.toString(), "-w", "-t", "60", "promote"));
    }

    private void run(List<String> args) {
        List<String> cmd = new ArrayList<>();
        if (LinuxUtils.isUnshareAvailable()) {
            cmd.addAll(List.of("unshare", "-U"));
        }
        cmd.add(binary.toString());
        cmd.addAll(args);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("pg_ctl " + args + " did not finish; see " + log);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("pg_ctl " + args + " exited " + p.exitValue() + "; see " + log);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The options of the first start, from {@code postmaster.opts} ({@code /path/postgres "-D" "dir" "-p"
     * "5432" "-c" "fsync=off" ...}), without the binary and {@code -D}, single-quoted for pg_ctl's shell.
     */
    static String serverOptions(String postmasterOpts) {
        List<String> tokens = new ArrayList<>();
        Matcher m = QUOTED.matcher(postmasterOpts);
        while (m.find()) {
            tokens.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).equals("-D")) {
                i++;
                continue;
            }
            if (out.length() > 0) {
                out.append(' ');
            }
            out.append('\'').append(tokens.get(i).replace("'", "'\\''")).append('\'');
        }
        return out.toString();
    }
}
