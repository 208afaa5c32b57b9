package io.outboxrelay.mentions;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay in front of PostgreSQL that cuts the first session it carries at one exact moment: after
 * the login completed (the server's first ReadyForQuery went through), on the client's first message.
 * For a driver that sends nothing of its own after login (application name in the startup packet), that
 * is the session a pool has just opened and is still setting up. Every later session is relayed
 * untouched. Test-only.
 */
final class FirstSessionCutProxy implements AutoCloseable {
    /** ReadyForQuery: type 'Z', length 5 (the status byte follows). */
    private static final byte[] READY_FOR_QUERY = {'Z', 0, 0, 0, 5};

    private final ServerSocket listener;
    private final int targetPort;
    private final AtomicInteger sessions = new AtomicInteger();
    private final AtomicBoolean cut = new AtomicBoolean();
    private final List<Socket> open = new CopyOnWriteArrayList<>();

    FirstSessionCutProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "cut-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Whether the first session was cut (a test's precondition). */
    boolean cutHappened() {
        return cut.get();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(client);
                open.add(server);
                boolean first = sessions.incrementAndGet() == 1;
                AtomicBoolean loggedIn = new AtomicBoolean();
                pump(server, client, first ? loggedIn : null, null);
                pump(client, server, null, first ? loggedIn : null);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /**
     * Copies {@code from} to {@code to}. With {@code watchLogin} it flags the first ReadyForQuery; with
     * {@code cutAfterLogin} it closes both sockets instead of forwarding once that flag is set.
     */
    private void pump(Socket from, Socket to, AtomicBoolean watchLogin, AtomicBoolean cutAfterLogin) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            int matched = 0;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    if (cutAfterLogin != null && cutAfterLogin.get()) {
                        cut.set(true);
                        break;
                    }
                    // flagged before forwarding: the client answers ReadyForQuery only once it has it
                    if (watchLogin != null && !watchLogin.get()) {
                        for (int i = 0; i < n && !watchLogin.get(); i++) {
                            matched = buf[i] == READY_FOR_QUERY[matched] ? matched + 1
                                : buf[i] == READY_FOR_QUERY[0] ? 1 : 0;
                            if (matched == READY_FOR_QUERY.length) {
                                watchLogin.set(true);
                            }
                        }
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // the other side closed; close both below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "cut-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        open.forEach(FirstSessionCutProxy::closeQuietly);
    }
}
