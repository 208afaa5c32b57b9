package io.outboxrelay.connector.faults;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.LocalTime;
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
 * The SLF4J backend of the worker and broker processes the fault tests start. Those processes get the
 * test classpath without the project's own modules (so no test logging backend), and a Connect worker
 * without a backend logs nothing, which leaves a fault test blind. {@link ChildJvm} copies this class
 * and a {@code ServiceLoader} entry for it into a directory of its own and puts only that directory
 * on the child's classpath.
 *
 * <p>Lines go to stdout (the child's log file): loggers under a prefix listed in
 * {@code -Dfaults.child.log.info} at INFO and above, everything else at {@code -Dfaults.child.log}
 * (default WARN) and above. Connect's MDC ({@code connector.context}) is printed, so a line says
 * which connector and task wrote it.
 */
public final class ChildProcessLogProvider implements SLF4JServiceProvider {
    static final String LEVEL = "faults.child.log";
    static final String INFO_PREFIXES = "faults.child.log.info";

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
        private final int defaultThreshold = level(System.getProperty(LEVEL, "WARN"));
        private final List<String> infoPrefixes = List.of(System.getProperty(INFO_PREFIXES, "").split(","));

        @Override
        public Logger getLogger(String name) {
            return loggers.computeIfAbsent(name, n -> new ChildLogger(n, threshold(n)));
        }

        private int threshold(String name) {
            for (String prefix : infoPrefixes) {
                if (!prefix.isBlank() && name.startsWith(prefix.trim())) {
                    return Math.min(defaultThreshold, Level.INFO.toInt());
                }
            }
            return defaultThreshold;
        }

        private static int level(String name) {
            return Level.valueOf(name.trim().toUpperCase(Locale.ROOT)).toInt();
        }
    }

    private static final class ChildLogger extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;
        private static final PrintStream OUT = System.out;
        private final int threshold;

        ChildLogger(String name, int threshold) {
            this.name = name;
            this.threshold = threshold;
        }

        @Override
        public boolean isTraceEnabled() {
            return Level.TRACE.toInt() >= threshold;
        }

        @Override
        public boolean isDebugEnabled() {
            return Level.DEBUG.toInt() >= threshold;
        }

        @Override
        public boolean isInfoEnabled() {
            return Level.INFO.toInt() >= threshold;
        }

        @Override
        public boolean isWarnEnabled() {
            return Level.WARN.toInt() >= threshold;
        }

        @Override
        public boolean isErrorEnabled() {
            return Level.ERROR.toInt() >= threshold;
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String messagePattern,
                                                   Object[] arguments, Throwable throwable) {
            if (level.toInt() < threshold) {
                return;
            }
            StringBuilder line = new StringBuilder(160).append(LocalTime.now()).append(' ').append(level.name())
                .append(' ').append(name.substring(name.lastIndexOf('.') + 1)).append(" [")
                .append(Thread.currentThread().getName()).append(']');
            Map<String, String> mdc = MDC.getCopyOfContextMap();
            if (mdc != null && mdc.containsKey("connector.context")) {
                line.append(' ').append(mdc.get("connector.context").trim());
            }
            line.append(' ').append(MessageFormatter.basicArrayFormat(messagePattern, arguments));
            if (throwable != null) {
                StringWriter trace = new StringWriter();
                throwable.printStackTrace(new PrintWriter(trace));
                line.append('\n').append(trace);
            }
            OUT.println(line);
        }
    }
}
