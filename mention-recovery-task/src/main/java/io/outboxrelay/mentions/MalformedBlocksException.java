package io.outboxrelay.mentions;

/**
 * A message's {@code blocks} column cannot be read as the block list the grammar expects (not JSON,
 * not an array, a block that is not an object, a text that is not a string). A per-message fault:
 * that message is left unrouted and the scan carries on. The message never quotes the blocks.
 */
public final class MalformedBlocksException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MalformedBlocksException(String reason) {
        super(reason);
    }

    public MalformedBlocksException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
