package io.outboxrelay.mentions;

/**
 * What the routing decision for one mentioned agent member is; written as the record's
 * {@code action}.
 */
public enum Arm {
    /** The member has a live session: steer the mention to it now. */
    STEER,
    /**
     * The member is offline and outside the sweep set (unsubscribed, not its home channel, channel not
     * mandatory): an {@code owed_mentions} row was written before the record, then wake it.
     */
    OWED,
    /** The member is offline but in the sweep set: wake it; the server's cursor sweep is the backstop. */
    WAKE
}
