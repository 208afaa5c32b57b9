package io.outboxrelay.connector.integration;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The SLF4J backend of the connector module's tests (registered in
 * {@code META-INF/services/org.slf4j.spi.SLF4JServiceProvider}). The test classpath has no other
 * binding, so without this every log line of the worker, the broker, HikariCP and the connector would
 * go to SLF4J's no-op logger and a test could not see what the connector logs.
 *
 * <p>Quiet by default, as the no-op logger was. While a {@link LogCapture} is open, every line is
 * recorded (TRACE and up for the connector, its pool and Connect; INFO and up for the rest). Run the
 * tests with {@code -Doutboxrelay.test.log=INFO} (or WARN, DEBUG, ...) to also print lines at or above
 * that level to stderr.
 */
public final class CapturingLogProvider implements SLF4JServiceProvider {
    private final ILoggerFactory loggerFactory = new Factory();
    private final IMarkerFactory markerFactory = new BasicMarkerFactory();
    private final MDCAdapter mdcAdapter = new BasicMDCAdapter();

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggerFactory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markerFactory;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdcAdapter;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        // nothing to set up
    }

    private static final class Factory implements ILoggerFactory {
        private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();

        @Override
        public Logger getLogger(String name) {
            return loggers.computeIfAbsent(name, CapturingLogger::new);
        }
    }

    private static final class CapturingLogger extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;
        private static final int PRINT_THRESHOLD = printThreshold();
        private final boolean verbose;

        CapturingLogger(String name) {
            this.name = name;
            this.verbose = name.startsWith("io.outboxrelay") || name.startsWith("com.zaxxer")
                || name.startsWith("org.postgresql") || name.startsWith("org.apache.kafka.connect");
        }

        private static int printThreshold() {
            String level = System.getProperty("outboxrelay.test.log");
            if (level == null || level.isBlank()) {
                return Integer.MAX_VALUE;
            }
            return Level.valueOf(level.trim().toUpperCase(Locale.ROOT)).toInt();
        }

        private boolean enabled(Level level) {
            if (level.toInt() >= PRINT_THRESHOLD) {
                return true;
            }
            return LogCapture.active() && (verbose || level.toInt() >= Level.INFO.toInt());
        }

        @Override
        public boolean isTraceEnabled() {
            return enabled(Level.TRACE);
        }

        @Override
        public boolean isDebugEnabled() {
            return enabled(Level.DEBUG);
        }

        @Override
        public boolean isInfoEnabled() {
            return enabled(Level.INFO);
        }

        @Override
        public boolean isWarnEnabled() {
            return enabled(Level.WARN);
        }

        @Override
        public boolean isErrorEnabled() {
            return enabled(Level.ERROR);
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String messagePattern,
                                                   Object[] arguments, Throwable throwable) {
            if (!enabled(level)) {
                return;
            }
            StringBuilder line = new StringBuilder(java.time.LocalTime.now().toString()).append(' ')
                .append(level.name()).append(' ').append(name).append(" [")
                .append(Thread.currentThread().getName()).append("] ")
                .append(MessageFormatter.basicArrayFormat(messagePattern, arguments));
            if (throwable != null) {
                StringWriter trace = new StringWriter();
                throwable.printStackTrace(new PrintWriter(trace));
                line.append('\n').append(trace);
            }
            String text = line.toString();
            LogCapture.record(text);
            if (level.toInt() >= PRINT_THRESHOLD) {
                System.err.println(text);
            }
        }
    }
}
