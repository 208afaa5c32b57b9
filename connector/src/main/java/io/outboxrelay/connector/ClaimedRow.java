package io.outboxrelay.connector;

/**
 * One outbox row as the claim returned it. {@code headerKeys}/{@code headerValues} are the entries of
 * the row's {@code headers} object (values that are not JSON strings as their JSON text);
 * {@code headersType} is the JSON type of the column, null when the column is NULL;
 * {@code leaseExpired} says another claimer's lease on the row had expired (it died or stalled).
 */
record ClaimedRow(
    long seq,
    String id,
    String type,
    String subject,
    String payload,
    long occurredAtMs,
    int attempts,
    String lastError,
    int payloadBytes,
    String headersType,
    String[] headerKeys,
    String[] headerValues,
    boolean leaseExpired) {

    /** Bytes the record's key, payload, headers and fixed fields take, before any converter. */
    int estimatedRecordBytes() {
        int bytes = payloadBytes + subject.length() * 2 + type.length() + id.length() + 256;
        if (headerKeys != null) {
            for (int i = 0; i < headerKeys.length; i++) {
                bytes += headerKeys[i].length() + (headerValues[i] == null ? 0 : headerValues[i].length()) + 8;
            }
        }
        return bytes;
    }
}
