/**
 * What a restart finds and finishes, set up in the real store as a killed process leaves it: a run that ended
 * without its report (written or not), a run killed just before it ended, and a step whose last allowed attempt was
 * in flight. Then `steward.recover()` runs as at start-up, with the console, real MCP server and fake LLM.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import type { Json, RunStatus, StepError, StepStatus } from '../../src/engine/types.ts';
import { byRole, type RoleReplies } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

interface Attempt {
  stepId: string;
  attempt?: number;
  status: StepStatus;
  output?: Json;
  error?: StepError;
}

const echoed = (text: string): Json => ({ content: [{ type: 'text', text: `Echo: ${text}` }] });
const timeout: StepError = { code: 'timeout', message: 'timed out after 30 s', retryable: true };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(
  db: 'postgres' | 'pglite',
  synthesizer: RoleReplies,
  o: { echoIdempotent?: boolean } = {},
): Promise<Harness> {
  h = await startHarness({ db, servers: [everything(o.echoIdempotent)], script: byRole({ synthesizer }) });
  return h;
}

/** server-everything, with `echo` idempotent (retried) unless told otherwise. */
const everything = (idempotent = true) => everythingStdioConfig({ overrides: { tools: { echo: { idempotent } } } });

/** A run as the store holds it after a kill: its plan, its attempts, and how far `finish` got. */
async function killedRun(
  harness: Harness,
  o: {
    steps: unknown[];
    attempts: Attempt[];
    status: RunStatus;
    reportDue: boolean;
    report?: string;
  },
): Promise<string> {
  const { store } = harness;
  const id = crypto.randomUUID();
  const at = new Date();
  await store.createRun({
    id,
    conversation: { channel: 'console', key: 'console' },
    requester: { id: 'ada', channel: 'console' },
    request: 'echo hello',
    at,
  });
  const plan = planSchema.parse(JSON.parse(planReply(o.steps)));
  await store.saveRevision(id, 0, plan, 'planned', at);
  await store.transition(id, ['planning'], 'running', { at });
  await store.setApprovedRisk(id, 'high', at);
  for (const a of o.attempts) {
    const attempt = a.attempt ?? 1;
    await store.recordStepStarted({ runId: id, stepId: a.stepId, attempt, revision: 0, args: {}, at });
    if (a.status === 'running') continue;
    await store.recordStepEnded({
      runId: id,
      stepId: a.stepId,
      attempt,
      status: a.status,
      at,
      durationMs: 5,
      output: a.output ?? null,
      error: a.error ?? null,
    });
  }
  if (o.reportDue) await store.markReportDue(id, at);
  if (o.status !== 'running') await store.transition(id, ['running'], o.status, { at });
  if (o.report !== undefined) await store.storeReport(id, o.report, o.status, at);
  return id;
}

const reports = (harness: Harness) => harness.output().match(/=== Report \((\w+)\) ===\n.*/g) ?? [];
const synthesizerCalls = (harness: Harness) => harness.llm.requests.filter((r) => r.role === 'synthesizer');

async function stored(harness: Harness, runId: string) {
  const row = await harness.db.db
    .selectFrom('runs')
    .select(['status', 'report', 'report_due'])
    .where('id', '=', runId)
    .executeTakeFirstOrThrow();
  const events = await harness.store.listEvents(runId);
  return { ...row, reported: events.filter((e) => e.type === 'reported').map((e) => e.payload) };
}

const oneEcho = [{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }];

describe.each(['postgres', 'pglite'] as const)('a restart reports a run that ended without one (%s)', (db) => {
  // Started once, in a hook: opening and migrating PGlite alone can take most of a test's time on a busy machine.
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      db,
      servers: [everything()],
      script: byRole({ synthesizer: ['Said hello once.'] }),
    });
  });
  afterAll(() => harness?.close());

  it('a run killed after it completed but before its report was written gets one report, written from its stored steps', async () => {
    const runId = await killedRun(harness, {
      steps: oneEcho,
      attempts: [{ stepId: 'say', status: 'succeeded', output: echoed('hello') }],
      status: 'completed',
      reportDue: true,
    });

    await harness.steward.recover();
    expect(reports(harness)).toEqual(['=== Report (completed) ===\nSaid hello once.']);
    const [prompt] = synthesizerCalls(harness);
    expect(prompt?.lastUserText).toContain('Run outcome: completed');
    expect(prompt?.lastUserText).toMatch(/say \(everything\.echo, [^)]*\): SUCCEEDED — Echo: hello/);
    expect(await stored(harness, runId)).toEqual({
      status: 'completed',
      report: 'Said hello once.',
      report_due: false,
      reported: [{ status: 'completed' }],
    });
    expect(harness.calls).toEqual([]);

    // Another restart finds nothing owed: no second report, no second model call.
    await harness.steward.recover();
    expect(reports(harness)).toHaveLength(1);
    expect(synthesizerCalls(harness)).toHaveLength(1);
  });
});

// The flows are the same on both databases; PGlite is covered above and by the store's own tests.
describe('a restart finishes what a kill left (postgres)', () => {
  const db = 'postgres';
  it('a report stored before the kill is sent as it was stored, never written again', async () => {
    const harness = await start(db, []);
    const runId = await killedRun(harness, {
      steps: oneEcho,
      attempts: [{ stepId: 'say', status: 'failed', error: { ...timeout, retryable: false } }],
      status: 'failed',
      reportDue: true,
      report: 'The echo timed out.',
    });

    await harness.steward.recover();
    await harness.steward.recover();
    expect(reports(harness)).toEqual(['=== Report (failed) ===\nThe echo timed out.']);
    expect(synthesizerCalls(harness)).toEqual([]);
    expect(await stored(harness, runId)).toMatchObject({ report: 'The echo timed out.', report_due: false });
  });

  it('when the report writer fails after the restart, a plain report from the stored steps is stored and sent', async () => {
    const harness = await start(db, [{ status: 500, body: { error: { message: 'down' } } }]);
    const runId = await killedRun(harness, {
      steps: [...oneEcho, { id: 'later', tool: 'everything.echo', args: { message: 'x' }, dependsOn: ['say'] }],
      attempts: [{ stepId: 'say', status: 'succeeded', output: echoed('hello') }],
      status: 'stopped',
      reportDue: true,
    });

    await harness.steward.recover();
    const [report] = reports(harness);
    expect(report).toBe(
      '=== Report (stopped) ===\nRun stopped. (The report writer failed (the model failed: the OpenAI-compatible server at ' +
        `${new URL(harness.llm.baseURL).host} failed (HTTP 500): down), so here are the step results.)`,
    );
    expect(harness.output()).toMatch(/say \(everything\.echo, [^)]*\): SUCCEEDED — Echo: hello\nlater .*NEVER RAN/);
    const after = await stored(harness, runId);
    expect(after.report).toMatch(
      /^Run stopped\. \(The report writer failed \(the model failed: .*\(HTTP 500\): down\)/,
    );
    expect(after).toMatchObject({ report_due: false, reported: [{ status: 'stopped' }] });
  });

  it('a run killed after its report was noted as owed but before it ended is resumed, ends and reports once', async () => {
    const harness = await start(db, ['Done after a restart.']);
    const runId = await killedRun(harness, {
      steps: oneEcho,
      attempts: [{ stepId: 'say', status: 'succeeded', output: echoed('hello') }],
      status: 'running',
      reportDue: true,
    });

    await harness.steward.recover();
    await harness.steward.idle();
    expect(reports(harness)).toEqual(['=== Report (completed) ===\nDone after a restart.']);
    expect(await stored(harness, runId)).toMatchObject({ status: 'completed', report_due: false });
    await harness.steward.recover();
    expect(reports(harness)).toHaveLength(1);
    expect(harness.calls).toEqual([]);
  });

  it('an idempotent step whose last allowed attempt was in flight fails instead of running a fourth time', async () => {
    const harness = await start(db, ['The echo failed: its attempts were used up.']);
    const runId = await killedRun(harness, {
      steps: oneEcho,
      attempts: [
        { stepId: 'say', attempt: 1, status: 'failed', error: timeout },
        { stepId: 'say', attempt: 2, status: 'failed', error: timeout },
        { stepId: 'say', attempt: 3, status: 'running' },
      ],
      status: 'running',
      reportDue: false,
    });

    await harness.steward.recover();
    await harness.steward.idle();
    expect(harness.output()).toContain(
      '! Steward restarted while say was running its last attempt (3 of 3). It is not run again and counts as failed.',
    );
    expect(reports(harness)).toEqual(['=== Report (failed) ===\nThe echo failed: its attempts were used up.']);
    expect(synthesizerCalls(harness)[0]?.lastUserText).toMatch(
      /say \(.*\): FAILED — Steward stopped while attempt 3 of 3 was running; its attempts are used up/,
    );
    const attempts = await harness.store.listStepAttempts(runId);
    expect(attempts.map((a) => [a.attempt, a.status, a.error?.code])).toEqual([
      [1, 'failed', 'timeout'],
      [2, 'failed', 'timeout'],
      [3, 'failed', 'interrupted'],
    ]);
    expect(attempts[2]?.error?.message).toMatch(/its attempts are used up/);
    expect(harness.calls).toEqual([]);
    expect((await stored(harness, runId)).status).toBe('failed');
  });

  it('an optional step whose last attempt was in flight fails, and the run goes on to complete', async () => {
    const harness = await start(db, ['Said hello; the optional echo failed.']);
    const runId = await killedRun(harness, {
      steps: [
        { id: 'maybe', tool: 'everything.echo', args: { message: 'maybe' }, optional: true },
        { id: 'say', tool: 'everything.echo', args: { message: 'hello' } },
      ],
      attempts: [
        { stepId: 'maybe', attempt: 3, status: 'running' },
        { stepId: 'say', status: 'succeeded', output: echoed('hello') },
      ],
      status: 'running',
      reportDue: false,
    });

    await harness.steward.recover();
    await harness.steward.idle();
    expect(reports(harness)).toEqual(['=== Report (completed) ===\nSaid hello; the optional echo failed.']);
    const attempts = await harness.store.listStepAttempts(runId);
    expect(attempts.filter((a) => a.stepId === 'maybe').map((a) => [a.attempt, a.status])).toEqual([[3, 'failed']]);
    expect(harness.calls).toEqual([]);
  });

  it('a step that is not idempotent, interrupted on its last attempt, waits for a person; resume runs it again', async () => {
    const harness = await start(db, ['Said hello after resume.'], { echoIdempotent: false });
    const runId = await killedRun(harness, {
      steps: oneEcho,
      attempts: [{ stepId: 'say', attempt: 3, status: 'running' }],
      status: 'running',
      reportDue: false,
    });

    await harness.steward.recover();
    expect(harness.output()).toContain('say was running. Its tool may have acted already');
    expect((await stored(harness, runId)).status).toBe('paused');
    expect(harness.calls).toEqual([]);
    await harness.type('resume');
    await harness.waitFor(/=== Report \(completed\) ===\nSaid hello after resume\./);
    const attempts = await harness.store.listStepAttempts(runId);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [3, 'failed'],
      [4, 'succeeded'],
    ]);
  });
  it('an llm step interrupted by a restart is said to have asked the model, not to have a tool that acted', async () => {
    const harness = await start(db, ['Summed up after resume.']);
    const runId = await killedRun(harness, {
      steps: [{ id: 'sum_up', kind: 'llm', args: { prompt: 'Sum up the week.' } }],
      attempts: [{ stepId: 'sum_up', status: 'running' }],
      status: 'running',
      reportDue: false,
    });

    await harness.steward.recover();
    await harness.waitFor(/sum_up was running\./);
    expect(harness.output()).toContain(
      'sum_up was running. Its model call may have been answered already; running it again asks the model again: resume to run it again, or stop.',
    );
    expect(harness.output()).not.toMatch(/tool may have acted/);
    expect((await stored(harness, runId)).status).toBe('paused');
    await harness.type('stop');
    await harness.waitFor(/=== Report \(stopped\) ===/);
  });
});
