package io.outboxrelay.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the benchmark, the quickstart and the fault suite rely on from {@link PostgresBuilder}'s servers. */
class LocalPostgresIT {

    /**
     * A PostgreSQL server of another user that once ran on the same port can leave its socket lock file in
     * {@code /tmp}, readable only by that user. zonky runs the server in a user namespace without root's file
     * capabilities, so a server with its socket in {@code /tmp} cannot read the lock to see that it is stale and
     * refuses to start (the quickstart's CI failed this way). The builder keeps the socket elsewhere.
     */
    @Test
    void startsOnAFixedPortWhileAnotherUsersStaleSocketLockForItIsInTmp() throws Exception {
        int port = freePort();
        Path lock = Path.of("/tmp/.s.PGSQL." + port + ".lock");
        assumeTrue(Files.notExists(lock), "another server's lock for the port chosen");
        Files.writeString(lock, "2147483646\n/var/lib/postgresql/data\n");
        try {
            assumeTrue(ownedByAnotherUser(lock), "needs root to hand the lock file to another user");
            try (LocalPostgres pg = new PostgresBuilder().port(port).start()) {
                assertThat(pg.port()).isEqualTo(port);
                assertThat(queryLong(pg, "SELECT 1")).isEqualTo(1L);
            }
            assertThat(lock).as("the other user's lock file is left alone").exists();
        } finally {
            Files.deleteIfExists(lock);
        }
    }

    @Test
    void fsyncOnMakesCommitsDurableAndTheDefaultDoesNot() {
        try (LocalPostgres durable = new PostgresBuilder().fsync(true).start();
             LocalPostgres throwAway = new PostgresBuilder().start()) {
            assertThat(durable.settings(PostgresBuilder.DURABLE.keySet())).isEqualTo(PostgresBuilder.DURABLE);
            assertThat(throwAway.settings(List.of("fsync"))).containsEntry("fsync", "off");
        }
    }

    @Test
    void anImmediateStopLosesNoCommitAndTheServerComesBackOnItsPort() throws SQLException {
        try (LocalPostgres pg = new PostgresBuilder().setting("synchronous_commit", "on").start()) {
            execute(pg, "CREATE TABLE kept (id int); INSERT INTO kept VALUES (1), (2)");
            pg.stopImmediately();
            assertThat(pg.running()).isFalse();
            assertThatThrownBy(() -> pg.connect("postgres").close()).isInstanceOf(SQLException.class);
            pg.start();
            assertThat(queryLong(pg, "SELECT count(*) FROM kept")).isEqualTo(2L);
            pg.stopImmediately(); // close() must bring it back to stop it through zonky
        }
    }

    private static void execute(LocalPostgres pg, String sql) throws SQLException {
        try (Connection c = pg.connect("postgres"); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static long queryLong(LocalPostgres pg, String sql) throws SQLException {
        try (Connection c = pg.connect("postgres"); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
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
