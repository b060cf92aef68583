/**
 * The run page tells the story of a run (issue 33): each step's tool, its arguments as planned and as resolved, whom
 * it ran as, each attempt with why it ended; and parent and child runs linked both ways. Over HTTP on the real app,
 * over a real PostgreSQL run store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/engine/plan/plan-schema.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from '../store/builders.ts';
import { ADA, createDashboard, DAN } from './dashboard-fixtures.ts';

const T0 = Date.UTC(2026, 11, 1, 9, 0);
const at = (s: number) => new Date(T0 + s * 1000);
const CONVERSATION = { channel: 'slack', key: 'C1:1700000001.0001' };

/** The markup of one step's part of the Steps section. */
function stepPart(page: string, id: string): string {
  const start = page.indexOf(`<div class="step" data-step="${id}"`);
  expect(start, `step ${id} on the page`).toBeGreaterThanOrEqual(0);
  const next = page.indexOf('<div class="step"', start + 1);
  return page.slice(start, next === -1 ? page.indexOf('</section>', start) : next);
}

/** Text of markup with its tags dropped and white space made single. */
const words = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .trim();

describe('dashboard: the story of a run', () => {
  let database: TestDatabase;
  let d: ReturnType<typeof createDashboard>;
  let dan: string;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    d = createDashboard(database, { personServers: ['fs'], workspaceServers: ['wiki'] });
    dan = await d.signIn(DAN);
  });
  afterAll(() => database?.close());

  it("shows each step's tool, arguments as planned and as resolved, whom it ran as, and why each attempt ended", async () => {
    const run = createNewRun({
      requester: ADA,
      conversation: CONVERSATION,
      request: 'files, then a summary',
      at: at(0),
    });
    await d.store.createRun(run);
    const base = createRevisionPlan();
    const plan: Plan = {
      ...base,
      steps: [
        {
          kind: 'tool',
          id: 'list',
          tool: 'fs.list_directory',
          // A token a person typed into the request: never shown.
          args: { path: '/tmp', apiKey: 'sk-live-typed-by-ada', note: '<img src=x onerror=alert(1)>' },
          dependsOn: [],
          description: '',
          optional: false,
        },
        {
          kind: 'tool',
          id: 'publish',
          tool: 'wiki.create_page',
          args: { title: 'Files', body: { $ref: 'steps.list.output.content[0].text' } },
          dependsOn: ['list'],
          description: '',
          optional: false,
        },
        {
          kind: 'llm',
          id: 'summary',
          args: { prompt: { $ref: 'steps.list.output.content[0].text' } },
          dependsOn: ['list'],
          description: '',
          optional: false,
        },
        {
          kind: 'tool',
          id: 'mail',
          tool: 'mail.send',
          args: { to: 'ada@example.com', access_token: 'xoxp-typed' },
          dependsOn: ['summary'],
          description: '',
          optional: true,
        },
      ],
    };
    await d.store.saveRevision(run.id, 1, plan, 'planned', at(0));
    const list = { runId: run.id, stepId: 'list', revision: 1 };
    const listArgs = { path: '/tmp', apiKey: 'sk-live-typed-by-ada', note: '<img src=x onerror=alert(1)>' };
    await d.store.recordStepStarted({ ...list, attempt: 1, args: listArgs, at: at(1) });
    const boom = { code: 'tool_error' as const, message: 'ENOENT: no such directory', retryable: true };
    await d.store.recordStepEnded({
      ...list,
      attempt: 1,
      status: 'failed',
      output: null,
      error: boom,
      at: at(2),
      durationMs: 1000,
    });
    await d.store.recordStepStarted({ ...list, attempt: 2, args: listArgs, at: at(3) });
    const listing = { content: [{ type: 'text', text: 'a.txt <b>b.md</b>' }] };
    await d.store.recordStepEnded({
      ...list,
      attempt: 2,
      status: 'succeeded',
      output: listing,
      error: null,
      at: at(4),
      durationMs: 1000,
    });
    const publish = { runId: run.id, stepId: 'publish', revision: 1, attempt: 1 };
    const long = `a.txt <b>b.md</b> ${'x'.repeat(5000)}`;
    await d.store.recordStepStarted({ ...publish, args: { title: 'Files', body: long }, at: at(5) });
    const interrupted = {
      code: 'interrupted' as const,
      message: 'Steward stopped while this step was running',
      retryable: false,
    };
    await d.store.recordStepEnded({
      ...publish,
      status: 'failed',
      output: null,
      error: interrupted,
      at: at(60),
      durationMs: 0,
    });
    const summary = { runId: run.id, stepId: 'summary', revision: 1, attempt: 1 };
    await d.store.recordStepStarted({ ...summary, args: { prompt: 'a.txt <b>b.md</b>' }, at: at(5) });
    const stopped = { code: 'cancelled' as const, message: 'Stopped by Ada', retryable: false };
    await d.store.recordStepEnded({
      ...summary,
      status: 'cancelled',
      output: null,
      error: stopped,
      at: at(6),
      durationMs: 1000,
    });
    const skipped = { code: 'cancelled' as const, message: 'its dependency summary did not succeed', retryable: false };
    // Never started: its dependency was cancelled (the way the dispatcher stores a skip).
    const mail = { stepId: 'mail', attempt: 1, status: 'skipped' as const, output: null, error: skipped };
    await d.store.recordSteps({
      runId: run.id,
      ended: [{ ...mail, at: at(6), durationMs: 0, unstarted: { revision: 1 } }],
      started: [],
    });

    const res = await d.get(`/runs/${run.id}`, dan);
    expect(res.status).toBe(200);
    const page = await res.text();
    // No secret a person typed is shown, planned or resolved; and nothing of the arguments is markup.
    expect(page).not.toContain('sk-live-typed-by-ada');
    expect(page).not.toContain('xoxp-typed');
    expect(page).not.toContain('<img src=x');

    const listPart = words(stepPart(page, 'list'));
    expect(listPart).toContain('list · fs.list_directory');
    expect(listPart).toContain('Ran as Ada (their own account)');
    // As stored (PostgreSQL's jsonb orders keys by length).
    const args = '{"note":"&lt;img src=x onerror=alert(1)&gt;","path":"/tmp","apiKey":"•••"}';
    expect(listPart).toContain(`Arguments as planned: ${args}`);
    expect(listPart).toContain(`1 failed: tool_error: ENOENT: no such directory 1.0 s ${args}`);
    expect(listPart).toContain(`2 succeeded 1.0 s ${args}`);
    expect(listPart).toContain('a.txt &lt;b&gt;b.md&lt;/b&gt;');

    const publishPart = words(stepPart(page, 'publish'));
    expect(publishPart).toContain('publish · wiki.create_page');
    expect(publishPart).toContain('Ran as the workspace');
    // The reference as the plan wrote it; the text it resolved to for the attempt, escaped and cut.
    expect(publishPart).toContain('{"body":⟨steps.list.output.content[0].text⟩,"title":"Files"}');
    expect(publishPart).toContain('interrupted by a restart');
    expect(publishPart).toContain('{"body":"a.txt &lt;b&gt;b.md&lt;/b&gt; xxx');
    expect(publishPart).not.toContain('x'.repeat(1_200));

    const summaryPart = words(stepPart(page, 'summary'));
    expect(summaryPart).toContain('summary · a model call');
    expect(summaryPart).toContain('Ran as Steward');
    expect(summaryPart).toContain('{"prompt":⟨steps.list.output.content[0].text⟩}');
    expect(summaryPart).toContain('1 cancelled by Stop');

    const mailPart = words(stepPart(page, 'mail'));
    expect(mailPart).toContain('mail · mail.send');
    expect(mailPart).toContain('{"to":"ada@example.com","access_token":"•••"}');
    expect(mailPart).toContain('1 skipped: its dependency summary did not succeed');
  });

  it('links a run that delegated to its child run, and the child to its parent, naming the Assistant', async () => {
    const parent = createNewRun({
      requester: ADA,
      conversation: CONVERSATION,
      request: 'ask the researcher',
      at: at(100),
    });
    await d.store.createRun(parent);
    const task = { assistant: 'researcher', task: 'find the <b>papers</b>' };
    const delegate = { kind: 'tool' as const, id: 'ask', tool: 'steward.delegate', args: task, dependsOn: [] };
    await d.store.saveRevision(
      parent.id,
      1,
      { ...createRevisionPlan(), steps: [{ ...delegate, description: '', optional: false }] },
      'planned',
      at(100),
    );
    const child = createNewRun({
      requester: ADA,
      conversation: CONVERSATION,
      request: task.task,
      at: at(101),
      assistant: 'researcher',
      parentRunId: parent.id,
    });
    await database.db
      .insertInto('delegations')
      .values({
        id: `${parent.id}/ask`,
        parent_run_id: parent.id,
        child_run_id: child.id,
        conversation_channel: CONVERSATION.channel,
        conversation_key: CONVERSATION.key,
        assistant: 'researcher',
        requester_id: ADA.id,
        requester_name: ADA.name ?? null,
        requester_channel: ADA.channel,
        depth: 1,
        depth_limit: 2,
        round: 1,
        task: task.task,
        created_at: at(101),
      })
      .execute();
    await d.store.createRun(child);
    await d.store.recordStepStarted({
      runId: parent.id,
      stepId: 'ask',
      attempt: 1,
      revision: 1,
      args: task,
      at: at(101),
    });

    const parentPage = await (await d.get(`/runs/${parent.id}`, dan)).text();
    const ask = stepPart(parentPage, 'ask');
    expect(ask).toContain(`href="/runs/${child.id}"`);
    expect(words(ask)).toContain(`Delegated to Assistant researcher: run ${child.id}`);

    const childPage = await (await d.get(`/runs/${child.id}`, dan)).text();
    expect(childPage).toContain(`href="/runs/${parent.id}"`);
    expect(words(childPage)).toContain(`Ran as Assistant researcher · delegated by run ${parent.id}`);
    // Following the link reaches the parent's page.
    const href = /<a class="parent" href="([^"]+)"/.exec(childPage)?.[1];
    expect(href).toBe(`/runs/${parent.id}`);
    expect((await d.get(href!, dan)).status).toBe(200);
  });
});
