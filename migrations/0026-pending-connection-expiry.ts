/**
 * Connections that wait for their person to confirm them expire (a day after they began to wait). A link notes the
 * SHA-256 of the pending tokens it brought, so that expiring it forgets those tokens and never newer ones a later link
 * of the same person brought. Every process looks for the expired ones each ownership round, so the rows still
 * waiting are indexed apart from the links that were used, answered or never opened, which the table keeps.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds pending_hash, and indexes the links whose connection still waits, by when it began to wait. */
export const pendingConnectionExpiry: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('mcp_connect_links').addColumn('pending_hash', 'text').execute();
    await db.schema
      .createIndex('mcp_connect_links_waiting')
      .on('mcp_connect_links')
      .column('pending_at')
      .where(sql.ref('pending_at'), 'is not', null)
      .where(sql.ref('decided_at'), 'is', null)
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('mcp_connect_links_waiting').execute();
    await db.schema.alterTable('mcp_connect_links').dropColumn('pending_hash').execute();
  },
};
