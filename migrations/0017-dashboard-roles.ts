/**
 * Whether the person a dashboard sign-in link signs in held a role named as an approver when they asked for it
 * (`discord:role:<id>` in STEWARD_APPROVERS): a platform tells a person's roles only with an action, so the link
 * carries them to the session it starts.
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `dashboard_links.approver_role` (false for every link from before). */
export const dashboardRoles: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('dashboard_links')
      .addColumn('approver_role', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('dashboard_links').dropColumn('approver_role').execute();
  },
};
