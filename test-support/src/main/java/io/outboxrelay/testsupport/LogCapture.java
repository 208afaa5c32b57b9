package io.outboxrelay.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import org.slf4j.LoggerFactory;

/**
 * Records, while open, what this JVM logs: every SLF4J line (through {@link CapturingLogProvider}),
 * the PostgreSQL driver's java.util.logging output at every level, and whatever is printed to stdout
 * and stderr. One capture at a time.
 */
public final class LogCapture implements AutoCloseable {
    /** Enough for a minute of the worker and broker at INFO; more is cut, and {@link #text} says so. */
    private static final int MAX_CHARS = 64 * 1024 * 1024;
    private static volatile LogCapture current;

    private final StringBuilder text = new StringBuilder();
    private final java.util.logging.Logger driverLogger = java.util.logging.Logger.getLogger("org.postgresql");
    private final java.util.logging.Level driverLevel = driverLogger.getLevel();
    private final Handler driverHandler = new DriverHandler();
    private final PrintStream out = System.out;
    private final PrintStream err = System.err;
    private boolean truncated;

    private LogCapture() {
    }

    /** Starts capturing; fails when SLF4J is not bound to {@link CapturingLogProvider}. */
    public static synchronized LogCapture start() {
        if (!(LoggerFactory.getILoggerFactory().getClass().getEnclosingClass() == CapturingLogProvider.class)) {
            throw new IllegalStateException("SLF4J is bound to " + LoggerFactory.getILoggerFactory().getClass()
                + ", not to the capturing test provider: a second SLF4J binding is on the test classpath");
        }
        if (current != null) {
            throw new IllegalStateException("a log capture is already open");
        }
        LogCapture capture = new LogCapture();
        capture.driverLogger.setLevel(java.util.logging.Level.ALL);
        capture.driverLogger.addHandler(capture.driverHandler);
        System.setOut(new PrintStream(capture.new Tee(capture.out), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(capture.new Tee(capture.err), true, StandardCharsets.UTF_8));
        current = capture;
        return capture;
    }

    static boolean active() {
        return current != null;
    }

    static void record(String line) {
        LogCapture c = current;
        if (c != null) {
            c.append(line + "\n");
        }
    }

    private synchronized void append(String s) {
        if (text.length() + s.length() > MAX_CHARS) {
            truncated = true;
            return;
        }
        text.append(s);
    }

    /** Everything captured so far. */
    public synchronized String text() {
        return truncated ? text + "\n[capture truncated at " + MAX_CHARS + " characters]" : text.toString();
    }

    /**
     * The SLF4J lines captured so far at {@code level} ("WARN", "INFO", ...): {@link CapturingLogProvider} writes the
     * time, then the level, then the logger and the message.
     */
    public synchronized List<String> lines(String level) {
        return text.toString().lines().filter(l -> {
            int space = l.indexOf(' ');
            return space >= 0 && l.startsWith(level + " ", space + 1);
        }).toList();
    }

    public synchronized boolean truncated() {
        return truncated;
    }

    @Override
    public synchronized void close() {
        current = null;
        driverLogger.removeHandler(driverHandler);
        driverLogger.setLevel(driverLevel);
        System.setOut(out);
        System.setErr(err);
    }

    private final class DriverHandler extends Handler {
        private final SimpleFormatter formatter = new SimpleFormatter();

        @Override
        public void publish(LogRecord record) {
            append("JUL " + formatter.format(record));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }

    /** Writes through to the original stream and into the capture. */
    private final class Tee extends OutputStream {
        private final PrintStream target;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        Tee(PrintStream target) {
            this.target = target;
        }

        @Override
        public synchronized void write(int b) {
            target.write(b);
            pending.write(b);
            if (b == '\n') {
                flushPending();
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            target.write(b, off, len);
            pending.write(b, off, len);
            flushPending();
        }

        private void flushPending() {
            append(pending.toString(StandardCharsets.UTF_8));
            pending.reset();
        }
    }
}
