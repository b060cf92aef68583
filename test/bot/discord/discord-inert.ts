/** What the Discord renderer's tests count as a live mention. */

/** A mention Discord would render (and, without allowed_mentions, ping): users, roles, channels, commands, all. */
export const LIVE_MENTION = /<@[!&]?\d+>|<#\d+>|<\/[^>\s]+:\d+>|@everyone|@here/i;
