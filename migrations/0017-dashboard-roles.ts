/**
 * The roles named as approvers (`discord:role:<id>` in STEWARD_APPROVERS) that the person a dashboard sign-in link
 * signs in held when they asked for it: a platform tells a person's roles only with an action, so the link carries
 * them to the session it starts, where each counts while the setting still names it.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `dashboard_links.approver_roles`, a JSON array of role ids (empty for every link from before). */
export const dashboardRoles: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('dashboard_links')
      .addColumn('approver_roles', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('dashboard_links').dropColumn('approver_roles').execute();
  },
};
