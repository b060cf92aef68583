/**
 * `AssistantStore` over Kysely, for PostgreSQL and PGlite alike. Every change is one transaction that locks the
 * Assistant's row, reads the old value, writes the new one and its `assistant_changes` row: the audit never misses a
 * change and never records one that did not happen. A name taken twice is decided by the unique name.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type {
  Assistant,
  AssistantAction,
  AssistantChange,
  AssistantDefinition,
  AssistantEdit,
  AssistantGrant,
  AssistantStore,
  ChangedBy,
  GrantEffect,
  GrantScope,
  RevokeOutcome,
} from '../engine/assistant/assistants.ts';
import type { Json } from '../engine/types.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import type { AssistantsTable, DatabaseSchema } from './schema.ts';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './store-retry.ts';

type Trx = Transaction<DatabaseSchema>;
type AssistantRow = Selectable<AssistantsTable>;

/** Durable Assistants in PostgreSQL or PGlite; failures surface as `StewardError` (`store_failed`). */
export class PgAssistantStore implements AssistantStore {
  private readonly retry: RetryPolicy;

  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    options: { retry?: Partial<RetryPolicy> } = {},
  ) {
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  private attempt<T>(action: string, work: () => Promise<T>): Promise<T> {
    return withRetries(action, work, this.retry);
  }

  /** One change in one transaction, with the Assistant's row locked (undefined when there is none). */
  private change<T>(action: string, name: string, work: (trx: Trx, row: AssistantRow | undefined) => Promise<T>) {
    return this.attempt(action, () =>
      this.db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom('assistants')
          .selectAll()
          .where('name', '=', name)
          .forUpdate()
          .executeTakeFirst();
        return work(trx, row);
      }),
    );
  }

  async listAssistants(): Promise<Assistant[]> {
    return this.attempt('listAssistants', async () => {
      const rows = await this.db.selectFrom('assistants').selectAll().orderBy('name').execute();
      const grants = await this.db
        .selectFrom('assistant_grants')
        .select(['assistant_id', 'scope', 'target', 'effect'])
        .orderBy('scope')
        .orderBy('target')
        .execute();
      return rows.map((row) =>
        fromRow(
          row,
          grants.filter((g) => String(g.assistant_id) === String(row.id)),
        ),
      );
    });
  }

  async getAssistant(name: string): Promise<Assistant | null> {
    return this.attempt('getAssistant', async () => {
      const row = await this.db.selectFrom('assistants').selectAll().where('name', '=', name).executeTakeFirst();
      if (!row) return null;
      return fromRow(row, await grantsOf(this.db, row.id));
    });
  }

  async createAssistant(a: AssistantDefinition, by: ChangedBy, at: Date): Promise<boolean> {
    return this.change('createAssistant', a.name, async (trx, existing) => {
      if (existing) return false;
      const inserted = await insertAssistant(trx, a, at);
      if (inserted === undefined) return false;
      for (const g of a.grants) await upsertGrant(trx, inserted, g, at);
      await audit(trx, a.name, 'create', by, null, definitionJson(a), at);
      return true;
    });
  }

  async editAssistant(name: string, edit: AssistantEdit, by: ChangedBy, at: Date): Promise<boolean> {
    return this.change('editAssistant', name, async (trx, row) => {
      if (!row) return false;
      await applyEdit(trx, row, edit, by, at);
      return true;
    });
  }

  async setGrant(name: string, grant: AssistantGrant, by: ChangedBy, at: Date): Promise<boolean> {
    return this.change('setGrant', name, async (trx, row) => {
      if (!row) return false;
      await applyGrant(trx, row, grant, by, at);
      return true;
    });
  }

  async revokeGrant(name: string, scope: GrantScope, target: string, by: ChangedBy, at: Date): Promise<RevokeOutcome> {
    return this.change('revokeGrant', name, async (trx, row): Promise<RevokeOutcome> => {
      if (!row) return 'gone';
      const removed = await trx
        .deleteFrom('assistant_grants')
        .where('assistant_id', '=', row.id)
        .where('scope', '=', scope)
        .where('target', '=', target)
        .returning('effect')
        .executeTakeFirst();
      if (!removed) return 'none';
      await audit(trx, name, 'revoke', by, { scope, target, effect: removed.effect }, null, at);
      await touch(trx, row, at);
      return 'revoked';
    });
  }

  async deleteAssistant(name: string, by: ChangedBy, at: Date): Promise<boolean> {
    return this.change('deleteAssistant', name, async (trx, row) => {
      if (!row) return false;
      const before = definitionJson(fromRow(row, await grantsOf(trx, row.id)));
      // Its grants go with it (on delete cascade); its audit rows are kept by name.
      await trx.deleteFrom('assistants').where('id', '=', row.id).execute();
      await audit(trx, name, 'delete', by, before, null, at);
      return true;
    });
  }

  async applyDefinitions(defs: readonly AssistantDefinition[], at: Date): Promise<void> {
    if (defs.length === 0) return;
    await this.attempt('applyDefinitions', () =>
      this.db.transaction().execute(async (trx) => {
        for (const def of defs) {
          // Insert first: two processes starting on one database both find no row, and the loser of
          // the insert waits for the winner's commit, then edits the row the winner created.
          const id = await insertAssistant(trx, def, at);
          if (id !== undefined) {
            for (const g of def.grants) await upsertGrant(trx, id, g, at);
            await audit(trx, def.name, 'create', 'file', null, definitionJson(def), at);
            continue;
          }
          const row = await trx
            .selectFrom('assistants')
            .selectAll()
            .where('name', '=', def.name)
            .forUpdate()
            .executeTakeFirst();
          if (!row) throw new Error(`the Assistant "${def.name}" could not be created`);
          const { purpose, instructions, models, defaultGrant } = def;
          await applyEdit(trx, row, { purpose, instructions, models, defaultGrant }, 'file', at);
          for (const g of def.grants) await applyGrant(trx, row, g, 'file', at);
        }
      }),
    );
  }

  async listChanges(name: string, limit: number): Promise<AssistantChange[]> {
    const rows = await this.attempt('listChanges', () =>
      this.db
        .selectFrom('assistant_changes')
        .selectAll()
        .where('assistant', '=', name)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),
    );
    return rows.map((r) => ({
      assistant: r.assistant,
      action: r.action as AssistantAction,
      changedBy: r.changed_by,
      changedByName: r.changed_by_name,
      before: r.before,
      after: r.after,
      at: r.created_at,
    }));
  }
}

async function insertAssistant(trx: Trx, a: AssistantDefinition, at: Date): Promise<number | string | undefined> {
  const inserted = await trx
    .insertInto('assistants')
    .values({
      name: a.name,
      purpose: toStorableText(a.purpose),
      instructions: toStorableText(a.instructions),
      models: toJsonText(a.models),
      default_grant: a.defaultGrant,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id;
}

/** Writes the fields that differ, with one audit row holding their old and new values; nothing when none differ. */
async function applyEdit(trx: Trx, row: AssistantRow, edit: AssistantEdit, by: ChangedBy, at: Date): Promise<void> {
  const old = fromRow(row, []);
  const before: Record<string, Json> = {};
  const after: Record<string, Json> = {};
  for (const key of ['purpose', 'instructions', 'models', 'defaultGrant'] as const) {
    const value = edit[key];
    if (value === undefined || toJsonText(value) === toJsonText(old[key])) continue;
    before[key] = old[key];
    after[key] = value;
  }
  const keys = Object.keys(after);
  if (keys.length === 0) return;
  await trx
    .updateTable('assistants')
    .set({
      ...(edit.purpose === undefined ? {} : { purpose: toStorableText(edit.purpose) }),
      ...(edit.instructions === undefined ? {} : { instructions: toStorableText(edit.instructions) }),
      ...(edit.models === undefined ? {} : { models: toJsonText(edit.models) }),
      ...(edit.defaultGrant === undefined ? {} : { default_grant: edit.defaultGrant }),
      updated_at: at,
    })
    .where('id', '=', row.id)
    .execute();
  // A change of the default alone is its own action; anything else is an edit.
  const action: AssistantAction = keys.length === 1 && keys[0] === 'defaultGrant' ? 'default' : 'edit';
  await audit(trx, row.name, action, by, before, after, at);
}

/** Sets a grant row when it differs, with its audit row (old effect, or null when there was none). */
async function applyGrant(trx: Trx, row: AssistantRow, g: AssistantGrant, by: ChangedBy, at: Date): Promise<void> {
  const old = await trx
    .selectFrom('assistant_grants')
    .select('effect')
    .where('assistant_id', '=', row.id)
    .where('scope', '=', g.scope)
    .where('target', '=', g.target)
    .executeTakeFirst();
  if (old?.effect === g.effect) return;
  await upsertGrant(trx, row.id, g, at);
  const before = old ? { scope: g.scope, target: g.target, effect: old.effect } : null;
  await audit(trx, row.name, 'grant', by, before, { scope: g.scope, target: g.target, effect: g.effect }, at);
  await touch(trx, row, at);
}

async function upsertGrant(trx: Trx, assistantId: number | string, g: AssistantGrant, at: Date): Promise<void> {
  await trx
    .insertInto('assistant_grants')
    .values({ assistant_id: assistantId, scope: g.scope, target: g.target, effect: g.effect, created_at: at })
    .onConflict((oc) => oc.columns(['assistant_id', 'scope', 'target']).doUpdateSet({ effect: g.effect }))
    .execute();
}

async function touch(trx: Trx, row: AssistantRow, at: Date): Promise<void> {
  await trx.updateTable('assistants').set({ updated_at: at }).where('id', '=', row.id).execute();
}

async function audit(
  trx: Trx,
  assistant: string,
  action: AssistantAction,
  by: ChangedBy,
  before: Json | null,
  after: Json | null,
  at: Date,
): Promise<void> {
  await trx
    .insertInto('assistant_changes')
    .values({
      assistant,
      action,
      changed_by: by === 'file' ? 'file' : `${by.channel}:${by.id}`,
      changed_by_name: by === 'file' ? null : (by.name ?? null),
      before: before === null ? null : toJsonText(before),
      after: after === null ? null : toJsonText(after),
      created_at: at,
    })
    .execute();
}

async function grantsOf(db: Kysely<DatabaseSchema>, id: number | string): Promise<AssistantGrant[]> {
  const rows = await db
    .selectFrom('assistant_grants')
    .select(['scope', 'target', 'effect'])
    .where('assistant_id', '=', id)
    .orderBy('scope')
    .orderBy('target')
    .execute();
  return rows.map(toGrant);
}

function toGrant(g: { scope: string; target: string; effect: string }): AssistantGrant {
  return { scope: g.scope as GrantScope, target: g.target, effect: g.effect as GrantEffect };
}

function fromRow(row: AssistantRow, grants: readonly { scope: string; target: string; effect: string }[]): Assistant {
  return {
    name: row.name,
    purpose: row.purpose,
    instructions: row.instructions,
    models: row.models ?? {},
    defaultGrant: row.default_grant as GrantEffect,
    grants: grants.map(toGrant),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function definitionJson(a: AssistantDefinition): Json {
  return {
    name: a.name,
    purpose: a.purpose,
    instructions: a.instructions,
    models: a.models,
    defaultGrant: a.defaultGrant,
    grants: a.grants.map((g) => ({ scope: g.scope, target: g.target, effect: g.effect })),
  };
}
