package io.outboxrelay.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * One way of waking the relay when a writer commits: what is done to the shipped schema's trigger
 * (SQL run after {@code schemas/sql/outbox.sql}, none for the schema as shipped) and the relay settings
 * that go with it. The default is always the schema as shipped, so a new wake-up that lands in
 * {@code outbox.sql} is what the benchmark measures as "shipped" without a change here; a candidate
 * not yet shipped is added from a file ({@code --wakeup=NAME=FILE}).
 */
record WakeupVariant(String name, String description, String schemaSql, Map<String, String> relayConfig) {

    /** Drops every trigger on {@code events}, whatever the schema named it. */
    static final String DROP_TRIGGERS = resource("drop-triggers.sql");

    /** schemas/sql/outbox.sql as is, the relay on its defaults (LISTEN on). */
    static final WakeupVariant SHIPPED = new WakeupVariant("shipped", "schemas/sql/outbox.sql as shipped", "",
        Map.of());

    /** Today's trigger before issue 13: a NOTIFY in every inserting statement; the relay on its defaults. */
    static final WakeupVariant LEGACY = new WakeupVariant("legacy",
        "legacy always-NOTIFY trigger (bench/src/main/resources/wakeup/legacy.sql)",
        DROP_TRIGGERS + "\n" + resource("legacy.sql"), Map.of());

    /** No trigger at all: the relay claims every 10 ms instead of listening. */
    static final WakeupVariant POLLING = new WakeupVariant("polling",
        "no trigger, outbox.listen.enabled=false, outbox.poll.interval.ms=10", DROP_TRIGGERS,
        Map.of("outbox.listen.enabled", "false", "outbox.poll.interval.ms", "10"));

    /** A candidate from a file: its SQL runs after the shipped schema; the relay gets {@code config} on top. */
    static WakeupVariant fromFile(String name, Path file, Map<String, String> config) {
        try {
            return new WakeupVariant(name, file + (config.isEmpty() ? "" : " with " + config),
                Files.readString(file), Map.copyOf(config));
        } catch (IOException e) {
            throw new UncheckedIOException("--wakeup=" + name + ": cannot read " + file, e);
        }
    }

    static String resource(String name) {
        try (InputStream in = WakeupVariant.class.getResourceAsStream("/wakeup/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource /wakeup/" + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
