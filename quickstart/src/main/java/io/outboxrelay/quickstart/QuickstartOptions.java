package io.outboxrelay.quickstart;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Command-line options of {@link Quickstart}: {@code --duration=<seconds>} (default: until Ctrl-C),
 * {@code --rate=<events per second>} (default 200) and {@code --help}. {@code home} is the repository
 * root, where {@code config-examples/} and {@code schemas/sql/} are read from.
 */
public record QuickstartOptions(Duration duration, int eventsPerSecond, Path home, boolean help) {
    public static final int DEFAULT_RATE = 200;
    static final String HOME_PROPERTY = "quickstart.home";
    static final String TEMPLATE = "config-examples/quickstart.json";

    public static final String USAGE = """
        Usage: ./quickstart.sh [--duration=<seconds>] [--rate=<events/s>] [--no-build]

          --duration=<seconds>  stop by itself after this many seconds (default: run until Ctrl-C)
          --rate=<events/s>     demo events written per second (default 200, at most 20000)
          --no-build            skip the Maven build (quickstart.sh only, after a first run)
          --help                this text

        Starts PostgreSQL, a Kafka broker and a Kafka Connect worker in one JVM, registers the outbox relay
        connector from config-examples/quickstart.json, writes demo events and shows them being relayed.
        """;

    /** Options for a run that stops by itself, for tests and scripts. */
    public static QuickstartOptions forDuration(Duration duration) {
        return new QuickstartOptions(duration, DEFAULT_RATE, findHome(), false);
    }

    public static QuickstartOptions parse(String... args) {
        Duration duration = null;
        int rate = DEFAULT_RATE;
        boolean help = false;
        for (String arg : args) {
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
            } else if (arg.startsWith("--duration=")) {
                long seconds = positive(arg, "--duration=");
                duration = Duration.ofSeconds(seconds);
            } else if (arg.startsWith("--rate=")) {
                long r = positive(arg, "--rate=");
                if (r > 20_000) {
                    throw new IllegalArgumentException("--rate is at most 20000 events per second, got " + r);
                }
                rate = (int) r;
            } else {
                throw new IllegalArgumentException("unknown argument '" + arg + "'");
            }
        }
        return new QuickstartOptions(duration, rate, help ? null : findHome(), help);
    }

    private static long positive(String arg, String prefix) {
        String value = arg.substring(prefix.length());
        try {
            long n = Long.parseLong(value);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(prefix.substring(0, prefix.length() - 1)
            + " takes a whole number above 0, got '" + value + "'");
    }

    /**
     * The repository root: the {@value #HOME_PROPERTY} system property (quickstart.sh sets it), else
     * the first directory at or above the working directory that holds {@value #TEMPLATE}.
     */
    static Path findHome() {
        String configured = System.getProperty(HOME_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            Path home = Path.of(configured).toAbsolutePath().normalize();
            if (!Files.isRegularFile(home.resolve(TEMPLATE))) {
                throw new IllegalArgumentException(HOME_PROPERTY + "=" + home + " has no " + TEMPLATE);
            }
            return home;
        }
        Path start = Path.of("").toAbsolutePath();
        for (Path p = start; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve(TEMPLATE))) {
                return p;
            }
        }
        throw new IllegalArgumentException("no " + TEMPLATE + " at or above " + start
            + "; run ./quickstart.sh from the repository");
    }
}
