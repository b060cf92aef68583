/**
 * A delegation survives its process (issue 16): real entry points in Slack HTTP mode on a private cluster, the
 * Assistant "ops" from the bootstrap file. The process driving both a parent run (waiting in its delegate step) and
 * its child run (a call in flight) is SIGKILLed; the other process takes both over. The parent's step is retried,
 * finds the same delegation and child run (no second child, no second round), and ends with the child's report.
 * Calls are counted at the chaos audit server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startChaosCluster, type ChaosCluster } from '../chaos/chaos-cluster.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { privatePostgresMissing } from '../helpers/private-postgres.ts';
import { reportsIn } from '../helpers/slack-delivery.ts';
import type { StewardProcess } from '../helpers/steward-process.ts';
import { waitUntil } from '../helpers/wait.ts';

const plan = (steps: unknown[]) =>
  JSON.stringify({ summary: 'Do the work', rationale: 'test', needsTools: true, answer: null, risks: [], steps });

/** The parent delegates a wait to ops, then waits itself; ops's plan waits long, then briefly. */
const script = byRole({
  planner: (req) =>
    req.system.includes('You plan as the Assistant "ops"')
      ? plan([
          { id: 'a', tool: 'chaos.wait', args: { tag: 'child.a', ms: 4_000 } },
          { id: 'b', tool: 'chaos.wait', args: { tag: 'child.b', ms: 100 }, dependsOn: ['a'] },
        ])
      : plan([
          { id: 'hand', tool: 'steward.delegate', args: { assistant: 'ops', task: 'Wait for the build.' } },
          { id: 'z', tool: 'chaos.wait', args: { tag: 'parent.z', ms: 100 }, dependsOn: ['hand'] },
        ]),
  synthesizer: (req) =>
    req.lastUserText.includes('Wait for the build.') ? 'ops waited.' : 'The build was waited for.',
  classifier: 'unrelated',
});

describeNeeding(privatePostgresMissing, 'a delegation across a SIGKILL', () => {
  let cluster: ChaosCluster | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('the process left holding a parent and its child is killed: the other carries both on, with one child', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-delegation-'));
    const assistantsFile = join(dir, 'assistants.json');
    const ops = { name: 'ops', purpose: 'Waits for things', default: 'deny', grants: { 'chaos.wait': 'allow' } };
    writeFileSync(assistantsFile, JSON.stringify({ assistants: [ops] }));
    const c = await startChaosCluster({
      processes: 2,
      llmScript: script,
      env: { STEWARD_LEASE_SECONDS: '1.5', STEWARD_ASSISTANTS_FILE: assistantsFile },
    });
    cluster = c;
    const [p1, p2] = c.processes as [StewardProcess, StewardProcess];
    await Promise.all([p1.start(), p2.start()]);

    const sent = await c.delivery.mention(() => p1.eventsUrl, { text: 'wait for the build via ops', user: 'U0ADA' });
    expect(sent.ok).toBe(true);
    const called = (caller: string, tag: string) =>
      c.audit().some((l) => l.type === 'call' && l.caller === caller && l.args.tag === tag);
    await waitUntil("p1 to call the child's first step", () => called('p1', 'child.a'), { timeoutMs: 30_000 });
    await p1.kill('SIGKILL');

    await waitUntil('both reports', () => reportsIn(c.slack, sent.threadTs).length >= 2, {
      timeoutMs: 60_000,
      details: () => p2.log(),
    });
    const { rows: runs } = await c.pool.query<{ id: string; status: string; parent_run_id: string | null }>(
      'SELECT id, status, parent_run_id FROM runs ORDER BY created_at',
    );
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(runs[1]!.parent_run_id).toBe(runs[0]!.id);
    const { rows: delegations } = await c.pool.query<{ round: number; ended: boolean; reply: string }>(
      'SELECT round, ended_at IS NOT NULL AS ended, reply FROM delegations',
    );
    expect(delegations).toEqual([{ round: 1, ended: true, reply: 'Report of the Assistant "ops":\nops waited.' }]);
    // The child's first step was in flight at p1 and ran again at p2; everything after it ran once, at p2.
    const calls = c
      .audit()
      .filter((l) => l.type === 'call')
      .map((l) => [l.caller, l.args.tag]);
    expect(calls).toEqual([
      ['p1', 'child.a'],
      ['p2', 'child.a'],
      ['p2', 'child.b'],
      ['p2', 'parent.z'],
    ]);
    const { rows: hand } = await c.pool.query<{ status: string; output: unknown }>(
      "SELECT status, output FROM step_attempts WHERE step_id = 'hand' ORDER BY attempt DESC LIMIT 1",
    );
    expect(hand[0]!.status).toBe('succeeded');
    expect(JSON.stringify(hand[0]!.output)).toContain('ops waited.');
  });
});
