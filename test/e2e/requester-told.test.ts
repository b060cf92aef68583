/** Never silent, in the engine: every way a request ends before its card shows reaches the person who asked. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Steward } from '../../src/engine/flows/steward.ts';
import type { OutboundMessage } from '../../src/engine/messages.ts';
import type { LlmClient, Notifier, RunStore, ToolRunner } from '../../src/engine/ports.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createTool } from '../engine/fixtures.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres');
});
afterAll(() => db.close());

const ada = { id: 'ada', channel: 'test' };
const plan = JSON.stringify({ summary: 's', needsTools: true, steps: [{ id: 'a', tool: 'srv.do', args: {} }] });
const answer = JSON.stringify({ summary: 'Four', needsTools: false, answer: 'Four.', steps: [] });

/** A steward whose planner answers `text`, over a store and a channel a test may break. */
function setUp(o: { text: string; store?: RunStore; refuse?: (m: OutboundMessage) => boolean }) {
  const sent: Array<{ to?: string; kind: string; text: string }> = [];
  const tools: ToolRunner = {
    listTools: () => [createTool('srv.do', { annotations: { readOnlyHint: true } })],
    callTool: async () => ({ ok: true, value: { content: [] } }),
  };
  const llm: LlmClient = {
    complete: async () => ({ text: o.text, model: 'm', usage: { inputTokens: 1, outputTokens: 1 } }),
  };
  const notifier: Notifier = {
    send: async (_c, m) => {
      // Status changes drive a card or the console's planning line; what a person is told is the rest.
      if (m.kind === 'runStatus') return;
      if (o.refuse?.(m)) throw new Error('channel_not_found');
      const text = 'text' in m ? m.text : m.kind;
      sent.push({ kind: m.kind, text, ...(m.kind === 'notice' && m.to ? { to: m.to.id } : {}) });
    },
  };
  const store = o.store ?? new PgRunStore(db.db);
  const settings = { maxParallel: 4, maxAttempts: 1, amendmentCap: 3, maxRepairs: 0, reviewTimeoutMs: 60_000 };
  const steward = new Steward({
    llm,
    tools,
    store,
    notifier,
    settings,
    log: () => undefined,
    clock: () => new Date(),
    newId: () => crypto.randomUUID(),
  });
  return { steward, sent, store };
}

async function runOf(key: string) {
  return db.db
    .selectFrom('runs')
    .select(['id', 'status'])
    .where('conversation_key', '=', key)
    .executeTakeFirstOrThrow();
}

describe('the requester always hears how a request ended', () => {
  it('an answer the conversation refuses reaches them privately', async () => {
    const { steward, sent } = setUp({ text: answer, refuse: (m) => m.kind === 'answer' });
    await steward.message({ conversation: { channel: 'test', key: 'answer' }, actor: ada, text: '2 + 2?' });
    expect(sent).toEqual([{ kind: 'notice', to: 'ada', text: 'Four.' }]);
    expect((await runOf('answer')).status).toBe('completed');
    await steward.shutdown();
  });

  it('no valid plan, with the thread refusing the notice: told privately', async () => {
    const { steward, sent } = setUp({ text: 'not a plan', refuse: (m) => m.kind === 'notice' && !m.to });
    await steward.message({ conversation: { channel: 'test', key: 'invalid' }, actor: ada, text: 'do it' });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ kind: 'notice', to: 'ada' });
    expect(sent[0]!.text).toMatch(/^I could not make a valid plan: /);
    expect((await runOf('invalid')).status).toBe('failed');
    await steward.shutdown();
  });

  it('a store failure while planning fails the run and says why in the thread', async () => {
    const real = new PgRunStore(db.db);
    const store = Object.create(real) as PgRunStore;
    store.saveRevision = () => Promise.reject(new Error('disk full'));
    const { steward, sent } = setUp({ text: plan, store });
    await steward.message({ conversation: { channel: 'test', key: 'broken' }, actor: ada, text: 'do it' });
    expect(sent).toEqual([
      {
        kind: 'notice',
        text: 'I could not finish planning this request (disk full); nothing was run. Please ask again.',
      },
    ]);
    expect((await runOf('broken')).status).toBe('failed');
    await steward.shutdown();
  });
});
