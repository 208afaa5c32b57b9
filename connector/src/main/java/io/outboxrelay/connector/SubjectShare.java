package io.outboxrelay.connector;

/**
 * The subjects one relay task owns: those whose hash falls in one of {@code taskCount} equal, contiguous ranges.
 * A subject's hash is PostgreSQL's {@code hashtext(subject::text)} moved to {@code [0, 2^32)}, and task
 * {@code i} of {@code n} owns the hashes {@code h} with {@code floor(h * n / 2^32) = i}: the range
 * {@code [low, high]} below. A range, not a remainder, because the claim's index (migration V10) holds the
 * hash as its second key after {@code seq}: a claim that reads the index in seq order checks each entry's
 * hash in the index itself and reads from the table only the rows of its own share.
 */
record SubjectShare(long low, long high) {
    /** How many hashes there are: the share's bounds lie in {@code [0, HASHES)}. */
    static final long HASHES = 1L << 32;

    /** Task {@code taskIndex} of {@code taskCount}; one task owns every hash. */
    static SubjectShare of(int taskIndex, int taskCount) {
        if (taskCount < 1 || taskIndex < 0 || taskIndex >= taskCount) {
            throw new IllegalArgumentException("task " + taskIndex + " of " + taskCount);
        }
        return new SubjectShare(firstHashOf(taskIndex, taskCount), firstHashOf(taskIndex + 1, taskCount) - 1);
    }

    /** The smallest hash h with floor(h * count / 2^32) >= index: ceil(index * 2^32 / count). Fits a long. */
    private static long firstHashOf(long index, long count) {
        return (index * HASHES + count - 1) / count;
    }
}
