import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, storedStart, waitForStoredEnd, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const longOp = (id: string, duration: number, extra: Record<string, unknown> = {}) => ({
  id,
  tool: 'everything.trigger-long-running-operation',
  args: { duration, steps: 1 },
  ...extra,
});

describe('console, failures end to end (postgres)', () => {
  it('a plan naming a tool that does not exist is repaired with the exact validation error', async () => {
    const bad = planReply([{ id: 's1', tool: 'everything.nope', args: {} }]);
    const good = planReply([{ id: 's1', tool: 'everything.echo', args: { message: 'fixed' } }]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [bad, good], synthesizer: ['done'] }),
    });
    await h.type('echo something');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    const planner = h.llm.requests.filter((r) => r.role === 'planner');
    expect(planner).toHaveLength(2);
    expect(planner[1]!.lastUserText).toContain('step s1: unknown tool "everything.nope"');
    expect(h.calls.map((c) => [c.name, c.args])).toEqual([['everything.echo', { message: 'fixed' }]]);
    expect(h.output()).not.toContain('everything.nope');
  });

  it('malformed planner output gets two repair calls, then a clear failure and no tool call', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: ['Sure! Here is my plan: step one...', '{"summary": 5}', '{"steps": "none"'] }),
    });
    await h.type('do something');
    await h.waitFor(/I could not make a valid plan:/);
    expect(h.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(3);
    expect(h.output()).toContain('✖ I could not make a valid plan: the answer is not a JSON object');
    expect(h.calls).toEqual([]);
    expect((await h.store.getRun((await onlyRun(h)).id))!.status).toBe('failed');
  });

  it('a tool that hangs past its timeout is retried (read-only), then fails; the report says what never ran', async () => {
    const servers = [
      everythingStdioConfig({ overrides: { tools: { 'trigger-long-running-operation': { timeoutMs: 300 } } } }),
    ];
    const plan = planReply([
      longOp('slow', 30),
      { id: 'after', tool: 'everything.echo', args: { message: 'x' }, dependsOn: ['slow'] },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers,
      settings: { maxAttempts: 2 },
      script: byRole({ planner: [plan], synthesizer: ['The slow step timed out.'] }),
    });
    const started = Date.now();
    await h.type('run the slow thing');
    await h.waitFor(/=== Report \(failed\) ===/);
    await h.steward.idle();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(h.calls.map((c) => c.name)).toEqual([
      'everything.trigger-long-running-operation',
      'everything.trigger-long-running-operation',
    ]);
    const attempts = await h.store.listStepAttempts((await onlyRun(h)).id);
    expect(attempts.filter((a) => a.stepId === 'slow').map((a) => [a.attempt, a.status, a.error?.code])).toEqual([
      [1, 'failed', 'timeout'],
      [2, 'failed', 'timeout'],
    ]);
    const synth = h.llm.requests.find((r) => r.role === 'synthesizer')!;
    expect(synth.lastUserText).toMatch(/slow \(everything.trigger-long-running-operation.*\): FAILED/);
    expect(synth.lastUserText).toMatch(/after \(everything.echo.*\): SKIPPED/);
  });

  it('an MCP server that dies mid-call fails the step as unavailable and the run halts with the reason', async () => {
    const plan = planReply([longOp('slow', 20)]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      settings: { maxAttempts: 1 },
      script: byRole({ planner: [plan], synthesizer: ['The server went away.'] }),
    });
    await h.type('run the slow thing');
    await h.waitFor(/▶ slow running/);
    process.kill(h.host.serverPid('everything')!, 'SIGKILL');
    await h.waitFor(/=== Report \(failed\) ===/);
    await h.steward.idle();
    const [attempt] = await h.store.listStepAttempts((await onlyRun(h)).id);
    expect(attempt).toMatchObject({ status: 'failed', error: { code: 'server_unavailable' } });
    expect(h.output()).toMatch(/✖ slow failed — .*everything/);
  });

  it('stop cancels the step in flight and keeps finished results', async () => {
    const plan = planReply([
      { id: 'first', tool: 'everything.echo', args: { message: 'one' } },
      longOp('slow', 20, { dependsOn: ['first'] }),
      { id: 'last', tool: 'everything.echo', args: { message: 'never' }, dependsOn: ['slow'] },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Stopped early.'] }),
    });
    await h.type('do three things');
    await h.waitFor(/▶ slow running/);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    await h.steward.idle();
    const runId = (await onlyRun(h)).id;
    const attempts = await h.store.listStepAttempts(runId);
    expect(Object.fromEntries(attempts.map((a) => [a.stepId, a.status]))).toEqual({
      first: 'succeeded',
      slow: 'cancelled',
      last: 'skipped',
    });
    expect(h.calls.map((c) => c.args)).toEqual([{ message: 'one' }, { duration: 20, steps: 1 }]);
    expect((await h.store.getRun(runId))!.status).toBe('stopped');
  });

  it('pause lets the running step finish but starts nothing new until resume', async () => {
    const plan = planReply([
      longOp('slow', 1),
      { id: 'next', tool: 'everything.echo', args: { message: 'after resume' }, dependsOn: ['slow'] },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Both ran.'] }),
    });
    await h.type('slow then echo');
    await h.waitFor(/▶ slow running/);
    await h.type('pause');
    await h.waitFor(/✔ slow succeeded/);
    const runId = (await onlyRun(h)).id;
    await waitForStoredEnd(h.store, runId, 'slow');
    expect(h.calls.map((c) => c.name)).toEqual(['everything.trigger-long-running-operation']);
    expect((await h.store.getRun(runId))!.status).toBe('paused');
    const resumedAt = new Date();
    await h.type('resume');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    expect(h.calls.map((c) => c.args)).toEqual([{ duration: 1, steps: 1 }, { message: 'after resume' }]);
    // Nothing started while the run was paused: the next step's stored start comes after the resume.
    expect((await storedStart(h.store, runId, 'next')).getTime()).toBeGreaterThanOrEqual(resumedAt.getTime());
  });
});
