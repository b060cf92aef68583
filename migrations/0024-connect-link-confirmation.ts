/**
 * A connection made through a connect link in a browser that showed no dashboard session of the link's person waits
 * for that person to confirm it in chat: where to ask them (the conversation the link was sent in), whether the
 * browser was signed in as them when it opened the link, when the connection became pending, and their answer.
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds the confirmation columns to mcp_connect_links. */
export const connectLinkConfirmation: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('mcp_connect_links')
      .addColumn('conversation_channel', 'text')
      .addColumn('conversation_key', 'text')
      .addColumn('signed_in', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('pending_at', 'timestamptz')
      .addColumn('decided_at', 'timestamptz')
      .addColumn('decision', 'text')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema
      .alterTable('mcp_connect_links')
      .dropColumn('conversation_channel')
      .dropColumn('conversation_key')
      .dropColumn('signed_in')
      .dropColumn('pending_at')
      .dropColumn('decided_at')
      .dropColumn('decision')
      .execute();
  },
};
