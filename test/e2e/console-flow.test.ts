import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, filesystemStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe.each(['postgres', 'pglite'] as const)('console, end to end on %s', (db) => {
  it('a read-only plan starts at once, feeds outputs forward exactly, and reports', async () => {
    const plan = planReply([
      {
        id: 'weather',
        tool: 'everything.get-structured-content',
        args: { location: 'Chicago' },
        description: 'get the weather',
      },
      {
        id: 'say',
        tool: 'everything.echo',
        args: { message: { $ref: 'steps.weather.output.structuredContent.conditions' } },
        dependsOn: ['weather'],
      },
      { id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } },
    ]);
    h = await startHarness({
      db,
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['It is fine in Chicago and 2 + 3 = 5.'] }),
    });

    await h.type('What is the weather in Chicago, and what is 2 + 3?');
    await h.waitFor(/=== Report \(completed\) ===\nIt is fine in Chicago and 2 \+ 3 = 5\./);
    await h.steward.idle();

    const out = h.output();
    expect(out).toContain('=== Plan (revision 0, risk LOW) ===');
    expect(out).toContain('1. [weather] everything.get-structured-content {"location":"Chicago"}');
    expect(out).toContain('Layers: 1: weather, sum | 2: say');
    expect(out).toContain('Low risk: started at once');
    expect(out).toMatch(/✔ say succeeded/);

    const run = await onlyRun(h);
    expect(run.status).toBe('completed');
    const attempts = await h.store.listStepAttempts(run.id);
    const weather = attempts.find((a) => a.stepId === 'weather')!;
    const conditions = (weather.output as { structuredContent: { conditions: string } }).structuredContent.conditions;
    expect(h.calls.map((c) => [c.name, c.args]).sort()).toEqual(
      [
        ['everything.echo', { message: conditions }],
        ['everything.get-structured-content', { location: 'Chicago' }],
        ['everything.get-sum', { a: 2, b: 3 }],
      ].sort(),
    );
    expect(attempts.find((a) => a.stepId === 'say')).toMatchObject({
      status: 'succeeded',
      args: { message: conditions },
    });
    expect(attempts.every((a) => a.status === 'succeeded' && a.endedAt !== null)).toBe(true);

    // The LLM is out of the control flow: the planner, then nothing until the one synthesis call,
    // which came after every tool call had answered (its prompt holds the results of both layers).
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'synthesizer']);
    expect(h.llm.requests.every((r) => !r.toolsSent)).toBe(true);
    const synthesis = h.llm.requests[1]!.lastUserText;
    expect(synthesis).toContain('The sum of 2 and 3 is 5.');
    expect(synthesis).toContain(`Echo: ${conditions}`);
    expect(h.llm.failures).toEqual([]);
    const usage = await h.store.llmUsageForRun(run.id);
    expect(usage.calls).toBe(2);
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect((await h.store.listEvents(run.id)).map((e) => e.type)).toEqual(
      expect.arrayContaining(['requested', 'autoApproved', 'stepStarted', 'stepEnded', 'dispatchFinished', 'reported']),
    );
  });
});

describe('console, end to end on postgres', () => {
  it('a risky plan waits; amend makes a new revision; a stale approve is refused; approve runs it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-fs-'));
    const write = (content: string) =>
      planReply([
        {
          id: 'w',
          tool: 'fs.write_file',
          args: { path: join(dir!, 'note.txt'), content },
          description: 'write the note',
        },
      ]);
    h = await startHarness({
      db: 'postgres',
      servers: [filesystemStdioConfig(dir)],
      script: byRole({ planner: [write('hello'), write('hello, world')], synthesizer: ['Wrote the note.'] }),
    });

    await h.type('Write hello to note.txt');
    await h.waitFor(/risk HIGH/);
    expect(h.output()).toContain('Type "approve", "amend <what to change>" (3 left), or "cancel".');
    expect(h.calls).toEqual([]);

    const run = await onlyRun(h);
    await h.type('amend make it say hello, world');
    await h.waitFor(/revision 1, risk HIGH/);
    expect(h.llm.requests[1]!.lastUserText).toContain('make it say hello, world');

    // A press on the card of revision 0 (what a stale button would carry) changes nothing.
    await h.steward.decision({
      runId: run.id,
      revision: 0,
      action: 'approve',
      actor: { id: 'ada', channel: 'console' },
    });
    expect(h.output()).toContain('That card shows revision 0, but the plan is now at revision 1');
    expect(h.calls).toEqual([]);

    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    expect(readFileSync(join(dir, 'note.txt'), 'utf8')).toBe('hello, world');
    expect(h.calls.map((c) => c.args)).toEqual([{ path: join(dir, 'note.txt'), content: 'hello, world' }]);

    const revisions = await h.store.listRevisions(run.id);
    expect(
      revisions.map((r) => [r.revision, (r.plan.steps[0] as unknown as { args: { content: string } }).args.content]),
    ).toEqual([
      [0, 'hello'],
      [1, 'hello, world'],
    ]);
    const decisions = await h.store.listDecisions(run.id);
    expect(decisions.map((d) => [d.action, d.revision, d.accepted])).toEqual([
      ['amend', 0, true],
      ['approve', 0, false],
      ['approve', 1, true],
    ]);
    expect((await h.store.getRun(run.id))!.amendmentRounds).toBe(1);
  });

  it('cancel at review runs nothing; a second approve after it is refused', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-fs-'));
    h = await startHarness({
      db: 'postgres',
      servers: [filesystemStdioConfig(dir)],
      script: byRole({
        planner: [planReply([{ id: 'w', tool: 'fs.write_file', args: { path: join(dir, 'x'), content: 'x' } }])],
      }),
    });
    await h.type('write x');
    await h.waitFor(/risk HIGH/);
    await h.type('cancel');
    await h.type('approve');
    expect(h.output()).toContain('Cancelled by ada. Nothing was run.');
    expect(h.output()).toContain('This run has already ended (cancelled); nothing changed.');
    expect(h.calls).toEqual([]);
    expect((await onlyRun(h)).status).toBe('cancelled');
  });

  it('past the amendment cap only approve or cancel remain, enforced by the database', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-fs-'));
    const p = planReply([{ id: 'w', tool: 'fs.write_file', args: { path: join(dir, 'x'), content: 'x' } }]);
    h = await startHarness({
      db: 'postgres',
      servers: [filesystemStdioConfig(dir)],
      settings: { amendmentCap: 1 },
      script: byRole({ planner: [p, p] }),
    });
    await h.type('write x');
    await h.waitFor(/revision 0/);
    await h.type('amend again');
    await h.waitFor(/revision 1, risk HIGH[\s\S]*Type "approve" \(no amendments left\), or "cancel"\./);
    await h.type('amend once more');
    expect(h.output()).toContain('No amendment rounds left (the limit is 1). Approve or cancel this plan.');
    expect(h.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(2);
    expect((await onlyRun(h)).status).toBe('awaiting_review');
  });

  it('a question that needs no tools is answered directly', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [
          JSON.stringify({ summary: 'greeting', needsTools: false, answer: 'Hello! How can I help?', steps: [] }),
        ],
      }),
    });
    await h.type('hi');
    await h.waitFor(/Hello! How can I help\?/);
    expect(h.calls).toEqual([]);
    expect((await onlyRun(h)).status).toBe('completed');
  });
});
