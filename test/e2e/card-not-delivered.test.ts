/** Regression: a plan card the platform refused left its run "running" with no driver, unseen (found by the Slack load bench). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmClient, Notifier, ToolRunner } from '../../src/engine/ports.ts';
import { Steward } from '../../src/engine/flows/steward.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createTool } from '../engine/fixtures.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres');
});
afterAll(() => db.close());

describe('a plan card the platform refuses', () => {
  it.each([
    ['low', true],
    ['high', false],
  ] as const)(
    'fails its run (%s risk) with the reason in its history, nothing runs, and the requester is told',
    async (risk, readOnly) => {
      const store = new PgRunStore(db.db);
      const calls: string[] = [];
      const tools: ToolRunner = {
        listTools: () => [createTool('srv.do', { annotations: { readOnlyHint: readOnly } })],
        callTool: async (name) => (calls.push(name), { ok: true, value: { content: [] } }),
      };
      const plan = JSON.stringify({ summary: 's', needsTools: true, steps: [{ id: 'a', tool: 'srv.do', args: {} }] });
      const llm: LlmClient = {
        complete: async () => ({ text: plan, model: 'm', usage: { inputTokens: 1, outputTokens: 1 } }),
      };
      const told: Array<{ to?: string; text: string }> = [];
      const notifier: Notifier = {
        send: async (_c, m) => {
          if (m.kind === 'plan') throw new Error('ratelimited: chat.postMessage');
          if (m.kind === 'notice') told.push({ to: m.to?.id, text: m.text });
        },
      };
      const steward = new Steward({
        llm,
        tools,
        store,
        notifier,
        clock: () => new Date(),
        newId: () => crypto.randomUUID(),
        log: () => undefined,
        settings: { maxParallel: 4, maxAttempts: 1, amendmentCap: 3, maxRepairs: 0, reviewTimeoutMs: 60_000 },
      });
      const conversation = { channel: 'test', key: `k-${risk}` };
      await steward.message({ conversation, actor: { id: 'ada', channel: 'test' }, text: 'do it' });
      await steward.idle();
      const [row] = await db.db
        .selectFrom('runs')
        .select('id')
        .where('conversation_key', '=', conversation.key)
        .execute();
      expect((await store.getRun(row!.id))!.status).toBe('failed');
      expect((await store.listEvents(row!.id)).map((e) => e.type)).toContain('cardNotDelivered');
      expect(calls).toEqual([]);
      // The requester hears it, privately, since posting in the conversation is what failed.
      expect(told).toEqual([
        {
          to: 'ada',
          text: 'I could not show the plan here (ratelimited: chat.postMessage), so nothing was run. Please ask again.',
        },
      ]);
      await steward.shutdown();
    },
  );
});
