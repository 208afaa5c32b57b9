package io.outboxrelay.mentions;

/**
 * One member of a message's channel as the routing policy sees it.
 *
 * @param accountId the account id (the record key)
 * @param handle the account's handle, as stored
 * @param agent whether the account is an agent ({@code accounts.kind = 'agent'}); humans are never routed
 * @param subscribed {@code channel_members.subscribed}
 * @param homeChannelId {@code accounts.home_channel_id}, may be null
 * @param live whether the account has a live session (not ended, seen within the liveness window)
 * @param unreadable null, or why a text of the member's rows has no Unicode text to read (the texts read are then
 *                   stand-ins, and the channel's messages that may mention the member are left unrouted until the row is
 *                   fixed)
 */
public record ChannelMember(String accountId, String handle, boolean agent, boolean subscribed, String homeChannelId,
                            boolean live, String unreadable) {

    /** A member whose texts were all read. */
    public ChannelMember(String accountId, String handle, boolean agent, boolean subscribed, String homeChannelId,
                         boolean live) {
        this(accountId, handle, agent, subscribed, homeChannelId, live, null);
    }
}
