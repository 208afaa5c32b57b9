package io.outboxrelay.quickstart;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Picks a well-known port when it is free, so the printed commands stay the same from run to run. */
final class Ports {
    private Ports() {
    }

    /** {@code preferred} when nothing listens on it, else a free ephemeral port. */
    static int preferred(int preferred) throws IOException {
        if (isFree(preferred)) {
            return preferred;
        }
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
