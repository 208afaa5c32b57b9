package io.outboxrelay.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;

/**
 * A standby's data directory made from a cleanly stopped primary's (a clean shutdown's directory is a base
 * backup): the copy, {@code standby.signal}, and {@code primary_conninfo} pointing back at the primary.
 */
final class StandbyDirectory {
    private StandbyDirectory() {
    }

    static void copy(Path primaryDataDir, Path standbyDataDir, int primaryPort, String applicationName) {
        try {
            deleteTree(standbyDataDir);
            Files.createDirectories(standbyDataDir.getParent());
            copyTree(primaryDataDir, standbyDataDir);
            Files.deleteIfExists(standbyDataDir.resolve("postmaster.pid"));
            Files.writeString(standbyDataDir.resolve("standby.signal"), "");
            Files.writeString(standbyDataDir.resolve("postgresql.auto.conf"), "primary_conninfo = 'host=localhost port="
                + primaryPort + " user=postgres application_name=" + applicationName + "'\n", StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy " + primaryDataDir + " for a standby", e);
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                // a directory copies as an empty one with its attributes: PostgreSQL wants 0700 on its data directory
                Files.copy(p, to.resolve(from.relativize(p).toString()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
