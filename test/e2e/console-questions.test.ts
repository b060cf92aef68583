/**
 * A server's question (MCP elicitation) in the console, against `@modelcontextprotocol/server-everything`'s own
 * `trigger-elicitation-request` (a form of 14 fields; the server offers the tool only to a client that declares the
 * capability): answered field by field, declined, timed out, an answer from someone else refused, and a Stop while
 * the question is open.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, waitForStoredEnd, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ASK = { id: 'ask', tool: 'everything.trigger-elicitation-request', args: {} };

async function start(settings: { questionTimeoutMs?: number } = {}): Promise<Harness> {
  h = await startHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({ planner: [planReply([ASK])], synthesizer: ['Done.'] }),
    settings,
    questions: true,
  });
  await h.type('ask me something');
  await h.waitFor(/=== Plan/);
  if (!/everything\.trigger-elicitation-request/.test(h.output())) throw new Error(h.output());
  await h.type('approve');
  await h.waitFor(/=== Question from MCP server "everything" ===/);
  return h;
}

async function outputOf(harness: Harness): Promise<string> {
  const run = await onlyRun(harness);
  const end = await waitForStoredEnd(harness.store, run.id, 'ask');
  return JSON.stringify(end.output);
}

async function storedQuestions(harness: Harness) {
  return harness.db.db
    .withTables<{
      server_questions: { outcome: string | null; answered_by: unknown; content: unknown; server: string };
    }>()
    .selectFrom('server_questions')
    .select(['outcome', 'answered_by', 'content', 'server'])
    .execute();
}

describe('a server asks a question mid-call (console, server-everything over stdio)', () => {
  it('answered field by field: the content reaches the server, defaults kept, and the question is stored', async () => {
    const harness = await start();
    expect(harness.output()).toContain("These are the server's words, not Steward's:");
    expect(harness.output()).toContain('Please provide inputs for the following fields:');
    expect(harness.output()).toMatch(/\? String \(required\) — Your full, legal name:/);
    await harness.type('Ada Lovelace');
    // The other 12 fields are optional: an empty line keeps each default or leaves it out.
    for (let i = 0; i < 12; i++) await harness.type('');
    await harness.waitFor(/The question from MCP server "everything" was answered by ada\./);
    const output = await outputOf(harness);
    expect(output).toContain('User provided the requested information');
    expect(output).toContain('Name: Ada Lovelace');
    expect(output).toContain('Favorite Integer: 42');
    const [stored] = await storedQuestions(harness);
    expect(stored).toMatchObject({ outcome: 'accepted', server: 'everything', answered_by: { id: 'ada' } });
    expect(stored?.content).toMatchObject({ name: 'Ada Lovelace', integer: 42, untitledSingleSelectEnum: 'Monica' });
  });

  it('a wrong entry is refused with the reason and asked again; the form stays open', async () => {
    const harness = await start();
    await harness.type('Ada');
    for (let i = 0; i < 5; i++) await harness.type('');
    await harness.type('500'); // integer, 1..100
    for (let i = 0; i < 6; i++) await harness.type('');
    await harness.waitFor(/! Integer: at most 100/);
    await harness.waitFor(/\? Integer \(a whole number from 1 to 100; optional; default 42\)/);
    await harness.type('7');
    await harness.waitFor(/was answered by ada/);
    expect(await outputOf(harness)).toContain('Favorite Integer: 7');
  });

  it('declined: the server hears decline', async () => {
    const harness = await start();
    await harness.type('decline');
    await harness.waitFor(/The question from MCP server "everything" was declined by ada\./);
    expect(await outputOf(harness)).toContain('User declined to provide the requested information');
    expect((await storedQuestions(harness))[0]?.outcome).toBe('declined');
  });

  it('unanswered by its deadline: declined, and the thread says no one answered in time', async () => {
    const harness = await start({ questionTimeoutMs: 1500 });
    await harness.waitFor(/was declined: no one answered in time/, 10_000);
    expect(await outputOf(harness)).toContain('User declined to provide the requested information');
    expect((await storedQuestions(harness))[0]?.outcome).toBe('timedOut');
  });

  it('someone who is neither the requester nor an approver cannot answer', async () => {
    const harness = await start();
    const id = await openQuestionId(harness);
    const reply = await harness.steward.answerQuestion({
      questionId: id,
      actor: { id: 'mallory', channel: 'console' },
      action: 'accept',
      values: { name: 'Mallory' },
    });
    expect(reply).toEqual({
      ok: false,
      refusal: 'Only the person who asked for this run, or an approver, can answer its questions.',
    });
    expect((await storedQuestions(harness))[0]?.outcome).toBeNull();
    await harness.type('decline');
    await harness.waitFor(/was declined by ada/);
  });

  it('Stop while the question is open cancels it, the thread says so, and the run stops', async () => {
    const harness = await start();
    await harness.type('stop');
    await harness.waitFor(/The question from MCP server "everything" was cancelled: the run was stopped\./);
    await harness.waitFor(/=== Report \(stopped\) ===/);
    expect((await storedQuestions(harness))[0]?.outcome).toBe('stopped');
  });
});

async function openQuestionId(harness: Harness): Promise<string> {
  const row = await harness.db.db
    .withTables<{ server_questions: { id: string } }>()
    .selectFrom('server_questions')
    .select('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
