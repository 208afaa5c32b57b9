package io.outboxrelay.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay in front of PostgreSQL that cuts sessions at moments a {@link Rule} picks: it closes both
 * sides instead of forwarding the chunk the rule names. Knows one thing of the protocol: when a session's
 * login completed (the server's first ReadyForQuery went through). It can also freeze sessions
 * ({@link #freezeSessionsThatSent}): their bytes are read and dropped both ways and neither side is closed,
 * a half-open connection as a dropped firewall mapping leaves it. For tests only (the modules' test scope).
 */
public final class CuttingProxy implements AutoCloseable {
    /** Decides, for each chunk read from one side, whether to cut the session instead of forwarding it. */
    public interface Rule {
        boolean cut(int session, boolean fromServer, byte[] chunk, int length, boolean loggedIn);
    }

    /**
     * The first session, on the client's first message after its login: for a driver that sends nothing
     * of its own after login (application name in the startup packet), the session a pool has just opened
     * and is still setting up.
     */
    public static final Rule FIRST_SESSION_AFTER_LOGIN =
        (session, fromServer, chunk, length, loggedIn) -> session == 1 && !fromServer && loggedIn;

    /**
     * Any session whose server sends {@code marker}, before the client reads it. For a statement whose
     * result fits the server's output buffer, that is after the server ran it to the end and committed it:
     * the client loses the result of work that was done.
     */
    public static Rule resultsContaining(String marker) {
        byte[] needle = marker.getBytes(StandardCharsets.UTF_8);
        return (session, fromServer, chunk, length, loggedIn) -> fromServer && indexOf(chunk, length, needle) >= 0;
    }

    /** Cuts nothing: a proxy whose sessions a test freezes ({@link #freezeSessionsThatSent}) or just watches. */
    public static final Rule NOTHING = (session, fromServer, chunk, length, loggedIn) -> false;

    /** The port of a {@code jdbc:postgresql://host:port/...} URL: group 1. */
    private static final java.util.regex.Pattern JDBC_PORT =
        java.util.regex.Pattern.compile("^jdbc:postgresql://[^:/,]+:(\\d+)/");

    /** ReadyForQuery: type 'Z', length 5 (the status byte follows). */
    private static final byte[] READY_FOR_QUERY = {'Z', 0, 0, 0, 5};

    private final ServerSocket listener;
    private final int targetPort;
    private final Rule rule;
    private final AtomicInteger sessions = new AtomicInteger();
    private final AtomicInteger cuts = new AtomicInteger();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    /** The first bytes each session's client sent, to pick sessions by what they did. */
    private final java.util.Map<Integer, StringBuffer> sent = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Set<Integer> frozen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final int SENT_KEPT = 4096;

    public CuttingProxy(int targetPort, Rule rule) throws IOException {
        this.targetPort = targetPort;
        this.rule = rule;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "cutting-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy in front of the server that {@code jdbcUrl} ({@code jdbc:postgresql://host:port/...}) names. */
    public static CuttingProxy inFrontOf(String jdbcUrl, Rule rule) throws IOException {
        return new CuttingProxy(Integer.parseInt(jdbcPort(jdbcUrl).group(1)), rule);
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** {@code jdbcUrl} with this proxy's port in place of the server's: the same database, through the proxy. */
    public String through(String jdbcUrl) {
        java.util.regex.Matcher m = jdbcPort(jdbcUrl);
        return jdbcUrl.substring(0, m.start(1)) + port() + jdbcUrl.substring(m.end(1));
    }

    private static java.util.regex.Matcher jdbcPort(String jdbcUrl) {
        java.util.regex.Matcher m = JDBC_PORT.matcher(jdbcUrl);
        if (!m.find()) {
            throw new IllegalArgumentException("not a jdbc:postgresql://host:port/ URL: " + jdbcUrl);
        }
        return m;
    }

    /** How many sessions were cut (a test's precondition). */
    public int cuts() {
        return cuts.get();
    }

    /** Whether some session's client sent {@code marker} among its first bytes (what a frozen one tried, say). */
    public boolean anySessionSent(String marker) {
        return sent.values().stream().anyMatch(b -> b.indexOf(marker) >= 0);
    }

    /**
     * Freezes every session open now whose client sent {@code marker} (e.g. {@code "LISTEN "}) among its first
     * bytes; later sessions pass as before. Returns how many it froze.
     */
    public int freezeSessionsThatSent(String marker) {
        int n = 0;
        for (java.util.Map.Entry<Integer, StringBuffer> e : sent.entrySet()) {
            if (e.getValue().indexOf(marker) >= 0 && frozen.add(e.getKey())) {
                n++;
            }
        }
        return n;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(client);
                open.add(server);
                int session = sessions.incrementAndGet();
                AtomicBoolean loggedIn = new AtomicBoolean();
                pump(session, server, client, true, loggedIn);
                pump(session, client, server, false, loggedIn);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(int session, Socket from, Socket to, boolean fromServer, AtomicBoolean loggedIn) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[65536];
            int matched = 0;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    if (!fromServer) {
                        StringBuffer kept = sent.computeIfAbsent(session, k -> new StringBuffer());
                        if (kept.length() < SENT_KEPT) {
                            kept.append(new String(buf, 0, Math.min(n, SENT_KEPT), StandardCharsets.ISO_8859_1));
                        }
                    }
                    if (frozen.contains(session)) {
                        continue; // half-open: read and dropped, nobody told
                    }
                    if (rule.cut(session, fromServer, buf, n, loggedIn.get())) {
                        cuts.incrementAndGet();
                        break;
                    }
                    // flagged before forwarding: the client answers ReadyForQuery only once it has it
                    if (fromServer && !loggedIn.get()) {
                        for (int i = 0; i < n && !loggedIn.get(); i++) {
                            matched = buf[i] == READY_FOR_QUERY[matched] ? matched + 1
                                : buf[i] == READY_FOR_QUERY[0] ? 1 : 0;
                            if (matched == READY_FOR_QUERY.length) {
                                loggedIn.set(true);
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
        }, "cutting-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static int indexOf(byte[] haystack, int length, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
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
        open.forEach(CuttingProxy::closeQuietly);
    }
}
