/**
 * Model usage notes how many of a call's input tokens the provider read from its prompt cache (OpenAI's
 * `cached_tokens`, Anthropic's `cache_read_input_tokens`). `input_tokens` keeps counting all of them, cached or not,
 * so budgets and earlier rows mean what they meant; rows from before this migration read 0.
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `llm_usage.cached_input_tokens`. */
export const cachedTokens: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('llm_usage')
      .addColumn('cached_input_tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('llm_usage').dropColumn('cached_input_tokens').execute();
  },
};
