import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, filesystemStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, storedStart, waitForStoredEnd, type Harness } from './harness.ts';

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const echo = (id: string, message: string, dependsOn: string[] = []) => ({
  id,
  tool: 'everything.echo',
  args: { message },
  dependsOn,
});
const slow = (id: string, duration: number, dependsOn: string[] = []) => ({
  id,
  tool: 'everything.trigger-long-running-operation',
  args: { duration, steps: 1 },
  dependsOn,
});

describe('steering a plan through the console (postgres)', () => {
  it('edit at review costs no tokens: the edited plan is a new revision and runs exactly as edited', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-edit-'));
    const plan = planReply([{ id: 'w', tool: 'fs.write_file', args: { path: join(dir, 'a.txt'), content: 'draft' } }]);
    h = await startHarness({
      db: 'postgres',
      servers: [filesystemStdioConfig(dir)],
      script: byRole({ planner: [plan], synthesizer: ['Written.'] }),
    });
    await h.type('write a note');
    await h.waitFor(/revision 0, risk HIGH/);
    const edited = {
      steps: [{ id: 'w', tool: 'fs.write_file', args: { path: join(dir, 'a.txt'), content: 'final' } }],
    };
    await h.type(`edit ${JSON.stringify(edited)}`);
    await h.waitFor(/revision 1, risk HIGH/);
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner']);
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('final');
    const run = await onlyRun(h);
    expect((await h.store.listRevisions(run.id)).map((r) => r.reason)).toEqual(['planned', 'edited by ada']);
    expect(run.amendmentRounds).toBe(0);
  });

  it('an edit that breaks the DAG is refused with the reason and changes nothing', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [planReply([echo('a', 'x'), echo('b', 'y', ['a'])])] }),
      settings: {},
    });
    await h.store.setReviewPreference({ id: 'ada', channel: 'console' }, 'all', new Date());
    await h.type('two echoes');
    await h.waitFor(/revision 0, risk LOW/);
    await h.type(`edit ${JSON.stringify({ steps: [echo('a', 'x', ['b']), echo('b', 'y', ['a'])] })}`);
    expect(h.output()).toContain('That edit was refused: the steps a, b form a dependency cycle');
    expect((await onlyRun(h)).revision).toBe(0);
  });

  it('a breakpoint holds the run after its step, shows the raw output, and continue goes on', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [planReply([echo('first', 'look at me'), echo('second', 'after', ['first'])])],
        synthesizer: ['ok'],
      }),
    });
    await h.store.setReviewPreference({ id: 'ada', channel: 'console' }, 'all', new Date());
    await h.type('two echoes');
    await h.waitFor(/revision 0, risk LOW/);
    await h.type('break first');
    await h.type('approve');
    await h.waitFor(/=== Breakpoint after first ===\n.*Echo: look at me/);
    const runId = (await onlyRun(h)).id;
    await waitForStoredEnd(h.store, runId, 'first');
    expect(h.calls.map((c) => c.args)).toEqual([{ message: 'look at me' }]);
    expect((await onlyRun(h)).status).toBe('paused');
    const continuedAt = new Date();
    await h.type('continue');
    await h.waitFor(/=== Report \(completed\) ===/);
    expect(h.calls.map((c) => c.args)).toEqual([{ message: 'look at me' }, { message: 'after' }]);
    // The breakpoint held the second step: its stored start comes after the continue.
    expect((await storedStart(h.store, runId, 'second')).getTime()).toBeGreaterThanOrEqual(continuedAt.getTime());
  });

  it('a thread reply asking for status is answered from the database, with no planner call', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [planReply([echo('first', 'one'), slow('wait', 2, ['first'])])],
        classifier: ['status'],
        synthesizer: ['done'],
      }),
    });
    await h.type('echo then wait');
    await h.waitFor(/▶ wait running/);
    await h.type('how is it going?');
    await h.waitFor(
      /Run running: 1\/2 steps finished\.\n• first succeeded: Echo: one\nRunning now: wait\nNothing left to start\./,
    );
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'classifier']);
    await h.waitFor(/=== Report \(completed\) ===/);
  });

  it('an amendment mid-run re-plans only the steps not yet run; "also do X" adds steps at the end', async () => {
    const first = planReply([echo('first', 'one'), slow('wait', 1, ['first']), echo('last', 'three', ['wait'])]);
    const amended = planReply([
      echo('first', 'one'),
      slow('wait', 1, ['first']),
      echo('last', 'THREE', ['wait']),
      echo('extra', 'four', ['last']),
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [first, amended], classifier: ['amend'], synthesizer: ['done'] }),
    });
    await h.type('three things');
    await h.waitFor(/▶ wait running/);
    await h.type('shout the last one, and also echo four');
    await h.waitFor(/revision 1, risk LOW/);
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    // The first card started at once; the revision only runs: it does not say it was started at once again.
    const [firstCard, revision] = h.output().split(/=== Plan \(revision 1/);
    expect(firstCard).toContain('Low risk: started at once.');
    expect(revision).toContain('Running. Type "pause" or "stop" while it runs.');
    expect(revision).not.toContain('started at once');
    expect(h.calls.map((c) => c.args)).toEqual([
      { message: 'one' },
      { duration: 1, steps: 1 },
      { message: 'THREE' },
      { message: 'four' },
    ]);
    const planner = h.llm.requests.filter((r) => r.role === 'planner')[1]!;
    expect(planner.lastUserText).toContain(
      'must stay exactly as they are (copy each one unchanged: same id, tool, args, after and note): first, wait',
    );
    expect(planner.lastUserText).toContain('first (everything.echo, no description): SUCCEEDED — Echo: one');
    const run = await onlyRun(h);
    expect(run.amendmentRounds).toBe(1);
    expect((await h.store.listStepAttempts(run.id)).filter((a) => a.stepId === 'first')).toHaveLength(1);
  });

  it('an amendment that rewrites a finished step is refused and the run goes on unchanged', async () => {
    const first = planReply([echo('first', 'one'), slow('wait', 1, ['first']), echo('last', 'three', ['wait'])]);
    const rewrite = planReply([echo('first', 'CHANGED'), slow('wait', 1, ['first']), echo('last', 'three', ['wait'])]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [first, rewrite], classifier: ['amend'], synthesizer: ['done'] }),
    });
    await h.type('three things');
    await h.waitFor(/▶ wait running/);
    await h.type('redo the first echo in capitals');
    await h.waitFor(/That revision was refused: step first already ran \(or is running\) and cannot be changed/);
    await h.waitFor(/=== Report \(completed\) ===/);
    expect(h.calls.map((c) => c.args)).toEqual([{ message: 'one' }, { duration: 1, steps: 1 }, { message: 'three' }]);
  });

  it('an amendment that adds a riskier step than was approved waits for approval before that step', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-risk-'));
    const first = planReply([slow('wait', 1)]);
    const riskier = planReply([
      slow('wait', 1),
      {
        id: 'save',
        tool: 'fs.write_file',
        args: { path: join(dir, 'out.txt'), content: 'saved' },
        dependsOn: ['wait'],
      },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig(), filesystemStdioConfig(dir)],
      script: byRole({ planner: [first, riskier], classifier: ['amend'], synthesizer: ['done'] }),
    });
    await h.type('wait a second');
    await h.waitFor(/▶ wait running/);
    await h.type('also save the result to out.txt');
    await h.waitFor(
      /Step save \(fs\.write_file\) was added or changed by an amendment written after seeing tool outputs\./,
    );
    const run = await onlyRun(h);
    expect(run.status).toBe('awaiting_review');
    expect(h.calls.map((c) => c.name)).toEqual(['everything.trigger-long-running-operation']);
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/);
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('saved');
  });

  it('someone other than the requester or an approver is refused and nothing changes; an approver may decide', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      settings: { approvers: ['test:boss'] },
      script: byRole({ planner: [planReply([slow('wait', 5)])], synthesizer: ['stopped'] }),
    });
    await h.type('wait');
    await h.waitFor(/▶ wait running/);
    const run = await onlyRun(h);
    await h.steward.decision({ runId: run.id, revision: 0, action: 'stop', actor: { id: 'mallory', channel: 'test' } });
    expect(h.output()).toContain('Only ada or an approver can stop this run.');
    expect((await h.store.getRun(run.id))!.status).toBe('running');
    await h.steward.decision({
      runId: run.id,
      revision: 0,
      action: 'stop',
      actor: { id: 'boss', channel: 'test', name: 'Boss' },
    });
    await h.waitFor(/=== Report \(stopped\) ===/);
    expect((await h.store.listDecisions(run.id)).map((d) => [d.actor.id, d.action, d.accepted])).toEqual([
      ['mallory', 'stop', false],
      ['boss', 'stop', true],
    ]);
  });
});
