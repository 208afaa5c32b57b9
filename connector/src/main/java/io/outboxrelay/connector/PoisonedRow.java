package io.outboxrelay.connector;

/** A row the relay set aside, as the poison statement returned it. */
record PoisonedRow(long seq, String id, String type, String subject, int attempts, long occurredAtMs,
                   long poisonedAtMs, String reason) {
}
