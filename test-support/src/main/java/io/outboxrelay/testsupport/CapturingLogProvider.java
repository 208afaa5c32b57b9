package io.outboxrelay.testsupport;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.MDC;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The SLF4J backend of the tests, in the test JVM and in the worker and broker processes the fault tests
 * start. Register it in the module's {@code META-INF/services/org.slf4j.spi.SLF4JServiceProvider} (this
 * jar does not, so a module may keep another backend); the fault suite's child JVMs get it from
 * {@code ChildJvm}. Without a backend every log line of the worker, the broker, HikariCP and the connector
 * would go to SLF4J's no-op logger and a test could not see what the connector logs.
 *
 * <p>Quiet by default. While a {@link LogCapture} is open, every line is recorded (TRACE and up for the
 * connector, its pool and Connect; INFO and up for the rest). Lines at or above {@value #LEVEL} (e.g.
 * {@code -Doutboxrelay.test.log=INFO}) are printed to stderr, and so are INFO lines of the loggers under
 * the comma-separated prefixes of {@value #INFO_PREFIXES}. Connect's MDC ({@code connector.context}) is
 * printed, so a line says which connector and task wrote it.
 */
public final class CapturingLogProvider implements SLF4JServiceProvider {
    public static final String LEVEL = "outboxrelay.test.log";
    public static final String INFO_PREFIXES = "outboxrelay.test.log.info";
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
        private final int printThreshold = level(System.getProperty(LEVEL));
        private final List<String> infoPrefixes = List.of(System.getProperty(INFO_PREFIXES, "").split(","));

        @Override
        public Logger getLogger(String name) {
            return loggers.computeIfAbsent(name, n -> new CapturingLogger(n, printThreshold(n)));
        }

        private int printThreshold(String name) {
            for (String prefix : infoPrefixes) {
                if (!prefix.isBlank() && name.startsWith(prefix.trim())) {
                    return Math.min(printThreshold, Level.INFO.toInt());
                }
            }
            return printThreshold;
        }

        private static int level(String name) {
            if (name == null || name.isBlank()) {
                return Integer.MAX_VALUE;
            }
            return Level.valueOf(name.trim().toUpperCase(Locale.ROOT)).toInt();
        }
    }

    private static final class CapturingLogger extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;
        private final int printThreshold;
        private final boolean verbose;

        CapturingLogger(String name, int printThreshold) {
            this.name = name;
            this.printThreshold = printThreshold;
            this.verbose = name.startsWith("io.outboxrelay") || name.startsWith("com.zaxxer")
                || name.startsWith("org.postgresql") || name.startsWith("org.apache.kafka.connect");
        }

        private boolean enabled(Level level) {
            if (level.toInt() >= printThreshold) {
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
                .append(Thread.currentThread().getName()).append("] ");
            Map<String, String> mdc = MDC.getCopyOfContextMap();
            if (mdc != null && mdc.containsKey("connector.context")) {
                line.append(mdc.get("connector.context").trim()).append(' ');
            }
            line.append(MessageFormatter.basicArrayFormat(messagePattern, arguments));
            if (throwable != null) {
                StringWriter trace = new StringWriter();
                throwable.printStackTrace(new PrintWriter(trace));
                line.append('\n').append(trace);
            }
            String text = line.toString();
            LogCapture.record(text);
            if (level.toInt() >= printThreshold) {
                System.err.println(text);
            }
        }
    }
}
