import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, filesystemStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('step kinds and concurrency, end to end (postgres)', () => {
  it('a condition picks its branch, an llm step gets its resolved prompt, and the skipped branch is reported', async () => {
    const plan = planReply([
      { id: 'sum', tool: 'everything.get-sum', args: { a: 20, b: 22 } },
      {
        id: 'check',
        kind: 'condition',
        expression: 'steps.sum.output.content[0].text contains "42"',
        dependsOn: ['sum'],
        ifTrue: ['summarize'],
        ifFalse: ['complain'],
      },
      {
        id: 'summarize',
        kind: 'llm',
        args: { prompt: { $ref: 'steps.sum.output.content[0].text' } },
        dependsOn: ['check'],
      },
      { id: 'complain', tool: 'everything.echo', args: { message: 'wrong sum' }, dependsOn: ['check'] },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], llm_step: ['Forty-two.'], synthesizer: ['The answer is 42.'] }),
    });
    await h.type('add 20 and 22 and say it in words');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    expect(h.calls.map((c) => c.name)).toEqual(['everything.get-sum']);
    const step = h.llm.requests.find((r) => r.role === 'llm_step')!;
    expect(step.lastUserText).toBe('The sum of 20 and 22 is 42.');
    expect(step.toolsSent).toBe(false);
    const [row] = await h.db.db.selectFrom('runs').select('id').execute();
    const attempts = await h.store.listStepAttempts(row!.id);
    expect(Object.fromEntries(attempts.map((a) => [a.stepId, [a.status, a.output]]))).toEqual({
      sum: ['succeeded', { content: [{ type: 'text', text: 'The sum of 20 and 22 is 42.' }] }],
      check: ['succeeded', { value: true }],
      summarize: ['succeeded', { text: 'Forty-two.' }],
      complain: ['skipped', null],
    });
    expect(h.llm.requests.find((r) => r.role === 'synthesizer')!.lastUserText).toMatch(
      /complain .*: SKIPPED — skipped: condition check was true/,
    );
    expect((await h.store.llmUsageForRun(row!.id)).calls).toBe(3);
  });

  it('two runs in one process at once never see each other: a decision on one leaves the other alone', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-two-'));
    const writeA = planReply([{ id: 'w', tool: 'fs.write_file', args: { path: join(dir, 'a.txt'), content: 'A' } }]);
    const slowB = planReply([
      { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 1, steps: 1 } },
      { id: 'e', tool: 'everything.echo', args: { message: 'B' }, dependsOn: ['slow'] },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig(), filesystemStdioConfig(dir)],
      script: byRole({
        planner: (req) => (req.lastUserText.includes('write') ? writeA : slowB),
        synthesizer: (req) => (req.lastUserText.includes('a.txt') ? 'A done' : 'B done'),
      }),
    });
    const actor = { id: 'u1', channel: 'test' };
    await Promise.all([
      h.steward.message({ conversation: { channel: 'test', key: 'thread-a' }, actor, text: 'write A' }),
      h.steward.message({ conversation: { channel: 'test', key: 'thread-b' }, actor, text: 'slow B' }),
    ]);
    const runs = await h.db.db.selectFrom('runs').select(['id', 'conversation_key', 'status']).execute();
    const a = runs.find((r) => r.conversation_key === 'thread-a')!;
    const b = runs.find((r) => r.conversation_key === 'thread-b')!;
    expect([a.status, b.status]).toEqual(['awaiting_review', 'running']);
    // Pausing B, then approving A: A runs to the end while B stays paused.
    await h.steward.decision({ runId: b.id, revision: 0, action: 'pause', actor });
    await h.steward.decision({ runId: a.id, revision: 0, action: 'approve', actor });
    await h.waitFor(/=== Report \(completed\) ===\nA done/);
    expect((await h.store.getRun(b.id))!.status).toBe('paused');
    await h.steward.decision({ runId: b.id, revision: 0, action: 'resume', actor });
    await h.steward.idle();
    expect((await h.store.getRun(a.id))!.status).toBe('completed');
    expect((await h.store.getRun(b.id))!.status).toBe('completed');
    expect((await h.store.listStepAttempts(a.id)).map((x) => x.stepId)).toEqual(['w']);
    expect((await h.store.listStepAttempts(b.id)).map((x) => x.stepId).sort()).toEqual(['e', 'slow']);
    expect((await h.store.listDecisions(a.id)).map((d) => d.action)).toEqual(['approve']);
    expect((await h.store.listDecisions(b.id)).map((d) => d.action)).toEqual(['pause', 'resume']);
  });

  it('a high-risk plan left without a decision is cancelled (fails closed); a medium one gets a reminder', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-timeout-'));
    const high = planReply([{ id: 'w', tool: 'fs.write_file', args: { path: join(dir, 'x'), content: 'x' } }]);
    const medium = planReply([{ id: 'd', tool: 'fs.create_directory', args: { path: join(dir, 'sub') } }]);
    h = await startHarness({
      db: 'postgres',
      servers: [filesystemStdioConfig(dir)],
      settings: { reviewTimeoutMs: 300 },
      script: byRole({ planner: [high, medium] }),
    });
    await h.type('write x');
    await h.waitFor(/No decision within 1 s: this high-risk plan was cancelled\. Nothing was run\./);
    await h.type('make a folder');
    await h.waitFor(/risk MEDIUM/);
    await h.waitFor(/Reminder: this plan is still waiting for approve, amend or cancel\./);
    const runs = await h.db.db.selectFrom('runs').select(['status']).orderBy('created_at').execute();
    expect(runs.map((r) => r.status)).toEqual(['cancelled', 'awaiting_review']);
    expect(h.calls).toEqual([]);
  });

  it('a plan that changes hands keeps its review deadline: one that ran out while nobody held it is cancelled at once', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-timeout-'));
    const high = planReply([{ id: 'w', tool: 'fs.write_file', args: { path: join(dir, 'x'), content: 'x' } }]);
    // A ten-minute timeout: only the stored deadline can end this review within the test.
    h = await startHarness({
      db: 'postgres',
      servers: [filesystemStdioConfig(dir)],
      settings: { reviewTimeoutMs: 600_000 },
      script: byRole({}),
    });
    // As a process that died leaves it: waiting for review, held by nobody, its deadline a minute ago.
    const id = crypto.randomUUID();
    const at = new Date();
    await h.store.createRun({
      id,
      conversation: { channel: 'console', key: 'console' },
      requester: { id: 'ada', channel: 'console' },
      request: 'write x',
      at,
    });
    await h.store.saveRevision(id, 0, planSchema.parse(JSON.parse(high)), 'planned', at);
    await h.store.transition(id, ['planning'], 'awaiting_review', { at });
    await h.store.setReviewDue(id, new Date(Date.now() - 60_000));

    await h.steward.recover();
    await h.waitFor(/No decision within 10 min: this high-risk plan was cancelled\. Nothing was run\./);
    expect((await h.store.getRun(id))?.status).toBe('cancelled');
    expect(h.calls).toEqual([]);
  });
});
