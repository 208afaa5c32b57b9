package io.outboxrelay.bench;

import java.util.List;

/**
 * One thing being measured, running in the benchmark's Connect worker: the relay with some task and
 * subscription count, or Debezium's PostgreSQL connector with the outbox EventRouter.
 */
interface Contender {
    /** e.g. "relay 2 tasks, 3 subs" or "Debezium + EventRouter". */
    String label();

    /** "relay" or "debezium". */
    String kind();

    /**
     * "" for the contender on its defaults (what the targets judge), else a short name of the settings it
     * runs with (a {@code --relay-variant}, the tuned Debezium, a tuning variant).
     */
    String variant();

    int tasks();

    /** Records per event: one per subscription for the relay, one for Debezium. */
    int recordsPerEvent();

    /** Whether its consumers read committed records only (an exactly-once contender's transactions). */
    default boolean readCommitted() {
        return false;
    }

    /** The topics its records land on, one per subscription. */
    List<String> topics();

    /** Makes it ready to be started on the database; the database's table may already hold a backlog. */
    void prepare(BenchDatabases.Db db) throws Exception;

    /** Starts relaying (the measured instant): creates the relay connector, or resumes Debezium. */
    void start() throws Exception;

    /** Waits until it is running (its tasks RUNNING). */
    void awaitRunning() throws Exception;

    /** After a measurement: waits for bookkeeping that is not part of delivery (the relay's stamps). */
    void settle(BenchDatabases.Db db) throws Exception;

    /** Stops relaying but keeps what the next {@link #start()} needs (Debezium: its slot and offsets). */
    void pause() throws Exception;

    /** Removes the connector and anything it left in the database. */
    void close() throws Exception;
}
