/**
 * Assistants (issue 16): named specialists with instructions, a model per role and a default grant; their grants as
 * rows (one per assistant, scope and target); an audit row for every change; and the Assistant a run belongs to.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

const now = sql`now()`;

/** Creates assistants, assistant_grants and assistant_changes, and adds runs.assistant. */
export const assistants: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('assistants')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('instructions', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('models', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('default_grant', 'text', (c) =>
        c
          .notNull()
          .defaultTo('deny')
          .check(sql`default_grant in ('allow', 'deny')`),
      )
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();

    await db.schema
      .createTable('assistant_grants')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('assistant_id', 'bigint', (c) => c.notNull().references('assistants.id').onDelete('cascade'))
      .addColumn('scope', 'text', (c) => c.notNull().check(sql`scope in ('tool', 'server')`))
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('effect', 'text', (c) => c.notNull().check(sql`effect in ('allow', 'deny')`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addUniqueConstraint('assistant_grants_assistant_scope_target_key', ['assistant_id', 'scope', 'target'])
      .execute();

    // Kept by name, with no key to assistants: the history of a deleted Assistant stays readable.
    await db.schema
      .createTable('assistant_changes')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('assistant', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('changed_by', 'text', (c) => c.notNull())
      .addColumn('changed_by_name', 'text')
      .addColumn('before', 'jsonb')
      .addColumn('after', 'jsonb')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();
    await db.schema
      .createIndex('assistant_changes_assistant_idx')
      .on('assistant_changes')
      .columns(['assistant', 'id'])
      .execute();

    // The Assistant a run belongs to, by name (null: Steward's own run).
    await db.schema.alterTable('runs').addColumn('assistant', 'text').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('runs').dropColumn('assistant').execute();
    for (const table of ['assistant_changes', 'assistant_grants', 'assistants']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
