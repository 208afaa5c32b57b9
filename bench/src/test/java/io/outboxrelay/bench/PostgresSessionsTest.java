package io.outboxrelay.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PostgresSessionsTest {
    @Test
    void sessionsAreNamedByWhatPgStatActivitySays() {
        assertThat(PostgresSessions.kind("client backend", "outbox-relay:orders-0#ab", "WITH s AS ")).isEqualTo(
            PostgresSessions.RELAY);
        assertThat(PostgresSessions.kind("client backend", "outbox-relay:orders-0#ab", "UNLISTEN ")).isEqualTo(
            PostgresSessions.RELAY_LISTEN);
        assertThat(PostgresSessions.kind("client backend", "outbox-relay:orders-0#ab", "LISTEN \"ou")).isEqualTo(
            PostgresSessions.RELAY_LISTEN);
        assertThat(PostgresSessions.kind("walsender", "Debezium Streaming", "")).isEqualTo(PostgresSessions.DEBEZIUM);
        assertThat(PostgresSessions.kind("client backend", "PostgreSQL JDBC Driver", "INSERT IN")).isEqualTo(
            PostgresSessions.WRITERS);
        assertThat(PostgresSessions.kind("autovacuum worker", "", "")).isEqualTo(PostgresSessions.AUTOVACUUM);
        assertThat(PostgresSessions.kind("checkpointer", "", "")).isEqualTo(PostgresSessions.BACKGROUND);
    }

    /**
     * A process alive at both readings counts its difference; one that exited counts what the postmaster reaped for it
     * beyond what it had used before the window, and one born in the window counts whole, both apart. A LISTEN session
     * whose last statement was its probe at one edge is still the LISTEN session.
     */
    @Test
    void theWindowCountsEachProcessOnceAndExitedOnesFromWhatWasReaped() {
        PostgresSessions.Reading start = new PostgresSessions.Reading(Map.of(1L, 100L, 2L, 50L, 3L, 30L, 4L, 10L),
            Map.of(1L, PostgresSessions.RELAY, 2L, PostgresSessions.WRITERS, 3L, PostgresSessions.AUTOVACUUM,
                4L, PostgresSessions.RELAY_LISTEN), 1_000);
        PostgresSessions.Reading end = new PostgresSessions.Reading(Map.of(1L, 130L, 2L, 90L, 5L, 7L, 4L, 12L),
            Map.of(1L, PostgresSessions.RELAY, 2L, PostgresSessions.WRITERS, 5L, PostgresSessions.WRITERS,
                4L, PostgresSessions.RELAY), 1_045);

        Map<String, Long> ms = PostgresSessions.between(start, end);

        assertThat(ms).containsEntry(PostgresSessions.RELAY, 300L).containsEntry(PostgresSessions.WRITERS, 400L)
            .containsEntry(PostgresSessions.RELAY_LISTEN, 20L)
            .as("the autovacuum worker had 30 ticks before and 45 were reaped; pid 5 started in the window with 7")
            .containsEntry(PostgresSessions.EXITED, 220L).containsEntry(PostgresSessions.AUTOVACUUM, 0L);
    }
}
