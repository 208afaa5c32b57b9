package io.outboxrelay.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.Test;

/**
 * A PostgreSQL server of another user that once ran on the quickstart's port can leave its socket lock
 * file in {@code /tmp}, readable only by that user. zonky runs the server in a user namespace without
 * root's file capabilities, so a server with its socket in {@code /tmp} cannot read the lock to see that
 * it is stale and refuses to start (CI failed this way). The quickstart's server keeps its socket elsewhere.
 */
class QuickstartPostgresIT {

    @Test
    void startsWhileAnotherUsersStaleSocketLockForItsPortIsInTmp() throws Exception {
        int port = freePort();
        Path lock = Path.of("/tmp/.s.PGSQL." + port + ".lock");
        assumeTrue(Files.notExists(lock), "another server's lock for the port chosen");
        Files.writeString(lock, "2147483646\n/var/lib/postgresql/data\n");
        try {
            assumeTrue(ownedByAnotherUser(lock), "needs root to hand the lock file to another user");
            try (QuickstartPostgres pg = QuickstartPostgres.start(port)) {
                assertThat(pg.port()).isEqualTo(port);
                assertThat(pg.queryLongs("SELECT 1")).containsExactly(1L);
            }
            assertThat(lock).as("the other user's lock file is left alone").exists();
        } finally {
            Files.deleteIfExists(lock);
        }
    }

    private static boolean ownedByAnotherUser(Path lock) {
        try {
            UserPrincipal nobody = lock.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            Files.setPosixFilePermissions(lock, PosixFilePermissions.fromString("rw-------"));
            Files.setOwner(lock, nobody);
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
