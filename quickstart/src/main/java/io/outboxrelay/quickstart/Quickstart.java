package io.outboxrelay.quickstart;

import com.fasterxml.jackson.databind.JsonNode;
import io.outboxrelay.connector.OutboxSourceConnectorConfig;
import io.outboxrelay.connector.Subscription;
import io.outboxrelay.embedded.ConnectRestClient;
import io.outboxrelay.embedded.EmbeddedWorker;
import io.outboxrelay.embedded.WorkerProperties;
import io.outboxrelay.mentions.MentionRecoveryConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.LogManager;
import org.apache.kafka.common.utils.Exit;

/**
 * {@code ./quickstart.sh}: a throw-away PostgreSQL, a KRaft broker and a distributed Connect worker in
 * this JVM; the connector registered through the REST API from {@code config-examples/quickstart.json};
 * a demo shop writing events through the outbox and a chat whose server "crashed" before routing some
 * @mentions; one progress line per second. Ctrl-C (or {@code --duration}) deletes the connector, stops
 * the worker, the broker and the database in that order, and prints a summary.
 */
public final class Quickstart {
    static final String CONNECTOR = "quickstart";
    /** Connect's usual REST port, when it is free, so the printed curl commands stay the same from run to run. */
    static final int REST_PORT = 8083;
    static final int CHAT_PERIOD_SECONDS = 10;

    private final QuickstartOptions options;
    private final PrintStream out;
    private volatile boolean stopRequested;
    private boolean stopped;
    private QuickstartDatabase db;
    /** The connector's password, read by the worker's FileConfigProvider: the stored config holds a reference. */
    private Path secrets;
    private QuickstartKafka kafka;
    private EmbeddedWorker connect;
    private DemoEventWriter writer;
    private DemoChat chat;
    private ProgressReporter progress;
    private List<Subscription> subscriptions = List.of();
    private String mentionsTopic;
    private long writerStartedNanos;
    private volatile String failure;
    private QuickstartSummary summary;
    private final List<Runnable> kafkaShutdownHooks = new CopyOnWriteArrayList<>();

    public Quickstart(QuickstartOptions options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public static void main(String[] args) {
        // Connect's REST layer (Jersey) logs through java.util.logging; keep it to real problems
        LogManager.getLogManager().getLogger("").setLevel(Level.SEVERE);
        QuickstartOptions options;
        try {
            options = QuickstartOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.print(QuickstartOptions.USAGE);
            System.exit(2);
            return;
        }
        if (options.help()) {
            System.out.print(QuickstartOptions.USAGE);
            return;
        }
        Quickstart quickstart = new Quickstart(options, System.out);
        Runtime.getRuntime().addShutdownHook(new Thread(quickstart::stopOnSignal, "quickstart-shutdown"));
        int status;
        try {
            QuickstartSummary summary = quickstart.run();
            status = summary != null && summary.ok() ? 0 : 1;
        } catch (Exception e) {
            System.err.println("Full logs: " + System.getProperty("quickstart.log", "target/quickstart.log"));
            status = 1;
        }
        System.exit(status);
    }

    /** Starts everything, reports until the duration passed or Ctrl-C, then stops everything. */
    public QuickstartSummary run() throws Exception {
        try {
            start();
            report();
        } catch (Exception e) {
            if (!stopRequested) {
                failure = e.getMessage();
                out.println();
                out.println("The quickstart failed: " + e.getMessage());
                throw e;
            }
        } finally {
            stop();
        }
        return summary;
    }

    private void start() throws Exception {
        takeOverKafkaShutdownHooks();
        Path home = options.home();
        out.println("Outbox Relay quickstart: PostgreSQL, Kafka and Kafka Connect in this one JVM; nothing is"
            + " installed and everything is deleted on exit.");
        long t = System.nanoTime();
        out.print("  PostgreSQL 17 ........ ");
        out.flush();
        db = QuickstartDatabase.start();
        db.applySchema(home);
        out.printf("port %d, schemas/sql/outbox.sql and mentions.sql applied (%s)%n", db.port(), since(t));

        t = System.nanoTime();
        out.print("  Kafka broker ......... ");
        out.flush();
        kafka = QuickstartKafka.start();
        out.printf("KRaft, %s (%s)%n", kafka.bootstrapServers(), since(t));

        t = System.nanoTime();
        out.print("  Kafka Connect ........ ");
        out.flush();
        Map<String, String> worker = WorkerProperties.distributed(kafka.bootstrapServers(), "quickstart-connect");
        worker.put("offset.flush.interval.ms", "5000");
        // the connector's password comes from a file, as docs/configuration.md recommends: GET .../config shows the
        // reference, never the password
        worker.put("config.providers", "file");
        worker.put("config.providers.file.class", "org.apache.kafka.common.config.provider.FileConfigProvider");
        connect = EmbeddedWorker.start(worker, Ports.isFree(REST_PORT) ? REST_PORT : 0);
        keepRestApiUpAtShutdown();
        out.printf("distributed worker, REST API %s (%s)%n", connect.restUrl(), since(t));

        chat = new DemoChat(db);
        chat.seed();

        t = System.nanoTime();
        Path template = home.resolve(QuickstartOptions.TEMPLATE);
        out.print("  Connector ............ ");
        out.flush();
        Map<String, String> config = ConnectorTemplate.load(template, Map.of(
            "QUICKSTART_DB_URL", db.jdbcUrl(),
            "QUICKSTART_DB_USER", QuickstartDatabase.RELAY_ROLE,
            "QUICKSTART_SECRETS", writeSecrets().toString()));
        OutboxSourceConnectorConfig parsed = new OutboxSourceConnectorConfig(config);
        subscriptions = parsed.subscriptions();
        MentionRecoveryConfig mentions = new MentionRecoveryConfig(config);
        mentionsTopic = mentions.enabled() ? mentions.topic() : null;
        int tasks = expectedTasks(config, mentions.enabled());
        connect.rest().put(CONNECTOR, config, Duration.ofSeconds(120));
        connect.rest().awaitState(CONNECTOR, "RUNNING", tasks, Duration.ofSeconds(120));
        out.printf("'%s' from %s, %d tasks RUNNING%s (%s)%n", CONNECTOR, home.relativize(template), tasks,
            mentions.enabled() ? " (" + (tasks - 1) + " relay, 1 mention recovery)" : "", since(t));

        writer = new DemoEventWriter(db, options.eventsPerSecond());
        writer.start();
        writerStartedNanos = System.nanoTime();
        chat.start(CHAT_PERIOD_SECONDS);
        progress = new ProgressReporter(db, kafka, writer, subscriptions, mentionsTopic, out);
        printGuide();
        progress.printLegend();
    }

    /**
     * Kafka's broker harness and the Connect worker register JVM shutdown hooks (deleting the broker's
     * log directories, stopping the worker) through Kafka's {@link Exit}. Run concurrently with ours on
     * Ctrl-C, they would pull the log directories from under a running broker; so they are collected
     * here and run last, after everything stopped in order. A component that asks to exit the JVM
     * fails with an exception instead, which the quickstart reports.
     */
    private void takeOverKafkaShutdownHooks() {
        Exit.setShutdownHookAdder((name, hook) -> kafkaShutdownHooks.add(hook));
        Exit.setExitProcedure((code, message) -> {
            throw new IllegalStateException("a Kafka component asked to exit the JVM with status " + code
                + (message == null ? "" : ": " + message));
        });
    }

    /**
     * Connect's REST server asks Jetty to stop it at JVM shutdown ({@code setStopAtShutdown}), through a shutdown hook
     * of Jetty's own that runs alongside ours: on Ctrl-C the REST API was gone before {@link #stop()} could delete
     * the connector, and the summary said FAILED, "the connector is gone". That hook is taken out; {@link #stop()}
     * stops the worker, REST server included, in its order.
     */
    private static void keepRestApiUpAtShutdown() {
        try {
            // by name: Jetty is on the worker's run-time class path only, in the version Kafka brings
            Object hook = Class.forName("org.eclipse.jetty.util.thread.ShutdownThread").getMethod("getInstance")
                .invoke(null);
            Runtime.getRuntime().removeShutdownHook((Thread) hook);
        } catch (ReflectiveOperationException | ClassCastException | IllegalStateException e) {
            // another Jetty, or the JVM is shutting down already: stop() does what it can, as before
        }
    }

    static int expectedTasks(Map<String, String> config, boolean mentions) {
        int max = Integer.parseInt(config.getOrDefault("tasks.max", "1").trim());
        return mentions ? Math.max(1, max - 1) + 1 : max;
    }

    /** The connector's password in a properties file only this user may read, deleted at stop. */
    private Path writeSecrets() throws IOException {
        secrets = Files.createTempFile("outbox-relay-quickstart-", ".properties",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(secrets, "connection.password=" + QuickstartDatabase.RELAY_PASSWORD + "\n");
        return secrets;
    }

    private void printGuide() {
        String psql = "psql -h localhost -p " + db.port() + " -U postgres";
        out.println();
        out.println("Where things are");
        out.println("  Connect REST API   " + connect.restUrl());
        out.println("  PostgreSQL         " + db.jdbcUrl() + "  (user postgres, no password; the connector logs"
            + " in as '" + QuickstartDatabase.RELAY_ROLE + "', a member of outbox_relay, with a password from a file)");
        out.println("  Kafka              " + kafka.bootstrapServers());
        out.println("  Logs               " + System.getProperty("quickstart.log", "target/quickstart.log"));
        out.println("Try, in another terminal (psql is not bundled: any PostgreSQL client works)");
        out.println("  curl -s " + connect.restUrl() + "/connectors/" + CONNECTOR + "/status");
        out.println("  curl -s " + connect.restUrl() + "/connectors/" + CONNECTOR + "/config");
        out.println("  " + psql + " -c \"SELECT seq, type, subject, fanned_out_at, fanout FROM events ORDER BY seq DESC"
            + " LIMIT 5\"");
        out.println("  " + psql + " -c \"SELECT id, author_id, mentions_routed_at FROM messages ORDER BY seq\"");
        out.println("  kafka-console-consumer.sh --bootstrap-server " + kafka.bootstrapServers() + " --topic "
            + subscriptions.get(0).topic() + " --from-beginning --property print.key=true --property print.headers=true");
        out.println("What is running");
        out.printf("  a demo shop commits %,d events/s (order.created/paid/shipped, customer.updated) with"
            + " OutboxWriter, in the transaction of each demo_orders change%n", options.eventsPerSecond());
        for (Subscription s : subscriptions) {
            out.printf("  subscription %-13s %s -> topic %s%s%n", s.name(), String.join(",", s.eventTypeGlobs()),
                s.topic(), s.coalesce() ? " (coalesces: latest event per subject in a claimed batch)" : "");
        }
        if (mentionsTopic != null) {
            out.printf("  mention recovery    a chat server that died before routing some @mentions; every %d s it"
                + " does it again -> topic %s%n", CHAT_PERIOD_SECONDS, mentionsTopic);
        }
        out.println(options.duration() == null ? "Ctrl-C stops everything." : "Stops by itself after "
            + options.duration().toSeconds() + " s (Ctrl-C stops earlier).");
        out.println();
    }

    private void report() throws Exception {
        long start = System.nanoTime();
        long deadline = options.duration() == null ? Long.MAX_VALUE : start + options.duration().toNanos();
        boolean samplesShown = false;
        long nextStatusCheck = start;
        for (long tick = 1; !stopRequested; tick++) {
            long wake = start + TimeUnit.SECONDS.toNanos(tick);
            while (!stopRequested && System.nanoTime() < Math.min(wake, deadline)) {
                TimeUnit.MILLISECONDS.sleep(50);
            }
            if (stopRequested || System.nanoTime() >= deadline) {
                return;
            }
            Map<String, Long> counts = progress.printLine(tick);
            if (!samplesShown && (tick >= 10 || counts.values().stream().allMatch(n -> n > 0))) {
                samplesShown = true;
                progress.printSamples();
            }
            if (System.nanoTime() >= nextStatusCheck) {
                nextStatusCheck = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                checkStatus();
            }
            if (writer.lastError() != null && writer.failures() > 0 && tick % 10 == 0) {
                out.println("  ! the demo writer's last error: " + writer.lastError());
            }
        }
    }

    private void checkStatus() {
        JsonNode status = connect.rest().status(CONNECTOR);
        String f = status == null ? "the connector is gone" : ConnectRestClient.failure(status);
        if (f != null && !f.equals(failure)) {
            failure = f;
            out.println("  ! " + f + "  (details: curl -s " + connect.restUrl() + "/connectors/" + CONNECTOR
                + "/status)");
        } else if (f == null && failure != null) {
            // restarted (by hand, as docs/quickstart.md shows) and running again: the summary reports the end state
            out.println("  ! the connector and its tasks are RUNNING again (before: " + failure + ")");
            failure = null;
        }
    }

    private void stopOnSignal() {
        stopRequested = true;
        stop();
    }

    /**
     * Stops in dependency order: the writers, the connector (its tasks release their leases), the
     * worker; reads the summary while the broker and the database still run; then stops those.
     */
    private synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        stopRequested = true;
        long seconds = writerStartedNanos == 0 ? 0 : TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - writerStartedNanos);
        List<String> done = new ArrayList<>();
        quietly(() -> {
            if (chat != null) {
                chat.stop();
            }
        });
        quietly(() -> {
            if (writer != null) {
                writer.stop();
                done.add("writer stopped");
            }
        });
        if (connect != null) {
            out.println();
            out.println("Stopping: deleting the connector, then the Connect worker, Kafka and PostgreSQL ...");
            quietly(this::checkStatus); // the end state, for the summary: a task restarted since the last look
            quietly(() -> {
                connect.rest().delete(CONNECTOR, Duration.ofSeconds(30));
                done.add("connector deleted");
            });
            quietly(() -> {
                connect.close();
                done.add("Connect worker stopped");
            });
        }
        if (progress != null) {
            quietly(() -> summary = progress.summary(seconds, failure));
        }
        if (kafka != null) {
            quietly(() -> {
                kafka.close();
                done.add("Kafka stopped");
            });
        }
        if (secrets != null) {
            quietly(() -> Files.deleteIfExists(secrets));
        }
        if (db != null) {
            quietly(() -> {
                db.close();
                done.add("PostgreSQL stopped and its data directory deleted");
            });
        }
        for (Runnable hook : kafkaShutdownHooks) {
            quietly(hook::run);
        }
        if (summary != null) {
            summary.print(out);
        }
        out.println(String.join(", ", done) + ".");
        if (summary != null) {
            out.println("Next: config-examples/README.md (the same connector on your own worker), docs/configuration.md,"
                + " docs/row-lifecycle.md");
        }
        out.flush();
    }

    private interface Step {
        void run() throws Exception;
    }

    private void quietly(Step step) {
        try {
            step.run();
        } catch (Exception e) {
            out.println("  ! while stopping: " + e);
        }
    }

    private static String since(long startNanos) {
        return String.format("%.1f s", (System.nanoTime() - startNanos) / 1e9);
    }
}
