import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { ReviewPreference } from '../../src/engine/types.ts';
import { byRole, type FakeReply } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { nextSteward, onlyRun, type Harness, useAuditHarness } from './harness.ts';

// Steps that start while the planner's answer still streams (SECURITY.md section 12): the console, the real engine on
// PostgreSQL, the openai SDK streaming from the fake model, and the audit server, which logs each call it receives.
const t = useAuditHarness();
let h: Harness | undefined;

const actor = { id: 'ada', channel: 'console' };
const called = (name: string) => t.audit.entries().filter((e) => e.type === 'call' && e.name === `${name}`);
const lookup = (answer: string, id?: string) => ({ ...(id && { id }), tool: 'audit.lookup', args: { answer } });

/**
 * A compact plan streamed in two pieces, cut just before `cutAt` (its first occurrence): the second piece is sent
 * only once `until` holds (checked while waiting), so what happened before it happened while the plan was unfinished.
 */
function heldPlan(
  steps: unknown[],
  cutAt: string,
  until: () => boolean,
  atHold: (() => void)[] = [],
): Extract<FakeReply, { text: string }> {
  const text = JSON.stringify({ steps, summary: 'Look things up' });
  const k = text.indexOf(cutAt);
  if (k < 0) throw new Error(`${cutAt} is not in the plan`);
  const beforeChunk = async (i: number) => {
    if (i !== 1) return;
    await waitUntil('the fact the stream is held for', until, { timeoutMs: 10_000 });
    for (const f of atHold) f();
  };
  return { text, chunks: [text.slice(0, k), text.slice(k)], beforeChunk };
}

async function start(
  preference: ReviewPreference,
  planner: FakeReply,
  synthesizer = ['Done.'],
  later: FakeReply[] = [],
): Promise<Harness> {
  const harness = await t.start({
    db: 'postgres',
    servers: [t.audit.config()],
    script: byRole({ planner: [planner, ...later], synthesizer }),
  });
  await harness.steward.setReviewPreference(actor, preference);
  return harness;
}

/** Two lookups that start while the plan streams, then a write that needs review (the most common first card). */
function lookThenNote(): Extract<FakeReply, { text: string }> {
  const steps = [lookup('one'), lookup('two'), { tool: 'audit.note', args: { text: 'remember' } }];
  return heldPlan(steps, '{"tool":"audit.note"', () => called('lookup').length === 2);
}

describe('steps start while the plan streams (console, postgres)', () => {
  it.each(['risky', 'none'] as const)(
    'review %s: a read-only closed-world fan-out reaches the server before the answer ends, and reports',
    async (preference) => {
      const steps = [lookup('one'), lookup('two'), lookup('three')];
      h = await start(
        preference,
        heldPlan(steps, ',"summary"', () => called('lookup').length === 3),
        ['Three.'],
      );

      await h.type('Look up one, two and three');
      await h.waitFor(/=== Report \(completed\) ===\nThree\./);
      await h.steward.idle();

      expect(called('lookup').map((e) => e.args?.['answer'])).toEqual(expect.arrayContaining(['one', 'two', 'three']));
      expect(called('lookup')).toHaveLength(3);
      expect(h.output()).toContain('Low risk: started at once');
      const run = await onlyRun(h);
      expect(run.status).toBe('completed');
      const attempts = await h.store.listStepAttempts(run.id);
      expect(attempts.map((a) => [a.stepId, a.status]).sort()).toEqual([
        ['s1', 'succeeded'],
        ['s2', 'succeeded'],
        ['s3', 'succeeded'],
      ]);
      expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'synthesizer']);
      expect(h.llm.failures).toEqual([]);
    },
  );

  it('a fan-out ("each") starts its calls together, stored by one statement, and the step after it is s5', async () => {
    const steps = [
      { tool: 'audit.lookup', each: ['one', 'two', 'three', 'four'].map((answer) => ({ answer })) },
      { tool: 'audit.note', args: { text: 'remember' } },
    ];
    h = await start(
      'risky',
      heldPlan(steps, '{"tool":"audit.note"', () => called('lookup').length === 4),
    );

    await h.type('Look up one to four, then note it');
    await h.waitFor(/Type "approve", "amend <what to change>" \(\d left\), or "cancel"\./);
    expect(h.output()).toMatch(/\[s4\] audit\.lookup .*✔ succeeded/);
    expect(h.output()).toMatch(/\[s5\] audit\.note .*— risk medium\n/);
    expect(
      called('lookup')
        .map((e) => e.args?.['answer'])
        .sort(),
    ).toEqual(['four', 'one', 'three', 'two']);
    const run = await onlyRun(h);
    // Arrived together, the four starts are one dispatcher wave: one transaction, not four.
    const { rows } = await sql<{ step: string; tx: string }>`
      select payload->>'stepId' as step, xmin::text as tx from run_events
      where run_id = ${run.id} and type = 'stepStarted' order by id`.execute(h.db.db);
    expect(rows.map((r) => r.step).sort()).toEqual(['s1', 's2', 's3', 's4']);
    expect(new Set(rows.map((r) => r.tx)).size).toBe(1);
    expect(h.llm.failures).toEqual([]);
  });

  it('a write step arriving after read-only ones ran: an ordinary review card with them shown done; approve runs it', async () => {
    h = await start('risky', lookThenNote());

    await h.type('Look up one and two, then note it');
    await h.waitFor(/Type "approve", "amend <what to change>" \(\d left\), or "cancel"\./);
    const card = h.output();
    expect(card).toMatch(/\[s1\] audit\.lookup .*✔ succeeded/);
    expect(card).toMatch(/\[s2\] audit\.lookup .*✔ succeeded/);
    expect(card).toMatch(/\[s3\] audit\.note .*— risk medium\n/);
    expect(card).toContain('s1, s2 started while the plan was written');
    // One card, one set of closing lines: no held-steps wording, nothing said twice.
    expect(card).not.toMatch(/held steps|riskier than what was approved|waits for your review of the whole plan/);
    expect(card.match(/=== Plan/g)).toHaveLength(1);
    expect(called('note')).toEqual([]);
    expect((await onlyRun(h)).status).toBe('awaiting_review');

    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===\nDone\./);
    await h.steward.idle();
    expect(called('note').map((e) => e.args)).toEqual([{ text: 'remember' }]);
    expect(called('lookup')).toHaveLength(2);
    expect((await onlyRun(h)).status).toBe('completed');
  });

  it('amend at that first card re-plans only what has not run: the lookups are kept, the new card waits, approve runs it', async () => {
    const amended = JSON.stringify({
      steps: [lookup('one'), lookup('two'), { tool: 'audit.note', args: { text: 'remember both' } }],
      summary: 'Look things up, then note both',
    });
    h = await start('risky', lookThenNote(), ['Done.'], [amended]);

    await h.type('Look up one and two, then note it');
    await h.waitFor(/or "cancel"\./);
    const from = h.output().length;
    await h.type('amend note both of them');
    await h.waitFor(/=== Plan \(revision 1, .*[\s\S]*or "cancel"\./, undefined, from);
    const card = h.output().slice(from);
    expect(card).toMatch(/\[s1\] audit\.lookup .*✔ succeeded/);
    expect(card).toMatch(/\[s3\] audit\.note \{"text":"remember both"\}/);
    expect(card.match(/=== Plan/g)).toHaveLength(1);
    // The planner saw what had run, and nothing of the revision ran before approval.
    expect(JSON.stringify(h.llm.requests[1]!.body)).toContain('note both of them');
    expect(called('note')).toEqual([]);
    expect((await onlyRun(h)).status).toBe('awaiting_review');

    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===\nDone\./);
    await h.steward.idle();
    expect(called('note').map((e) => e.args)).toEqual([{ text: 'remember both' }]);
    expect(called('lookup')).toHaveLength(2);
  });

  it('edit at that first card changes only what has not run, and waits for approval again', async () => {
    h = await start('risky', lookThenNote());

    await h.type('Look up one and two, then note it');
    await h.waitFor(/or "cancel"\./);
    const from = h.output().length;
    const full = (id: string, tool: string, args: object) => ({ id, kind: 'tool', tool, args, dependsOn: [] });
    const edited = {
      steps: [
        full('s1', 'audit.lookup', { answer: 'one' }),
        full('s2', 'audit.lookup', { answer: 'two' }),
        full('s3', 'audit.note', { text: 'edited' }),
      ],
    };
    await h.type(`edit ${JSON.stringify(edited)}`);
    await h.waitFor(/=== Plan \(revision 1, [\s\S]*or "cancel"\./, undefined, from);
    expect(called('note')).toEqual([]);
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    expect(called('note').map((e) => e.args)).toEqual([{ text: 'edited' }]);
  });

  it('cancel at that first card runs nothing more, and the report says what ran', async () => {
    h = await start('risky', lookThenNote(), ['Looked up one and two; nothing was noted.']);

    await h.type('Look up one and two, then note it');
    await h.waitFor(/or "cancel"\./);
    await h.type('cancel');
    await h.waitFor(/=== Report \(stopped\) ===\nLooked up one and two; nothing was noted\./);
    await h.steward.idle();
    expect(called('note')).toEqual([]);
    expect(called('lookup')).toHaveLength(2);
    const synthesizer = JSON.stringify(h.llm.requests.find((r) => r.role === 'synthesizer')!.body);
    expect(synthesizer).toMatch(/s1 \(audit\.lookup[^"]*SUCCEEDED[^"]*s3 \(audit\.note[^"]*NEVER RAN/);
  });

  it('a chain whose first answer fails validation after its first step started is repaired, not stopped', async () => {
    const chain = [
      lookup('one'),
      { tool: 'audit.lookup', args: { answer: { $ref: 's1.content[0].text' } }, optional: 'no' },
    ];
    const repaired = JSON.stringify({
      steps: [lookup('one'), { tool: 'audit.lookup', args: { answer: { $ref: 's1.content[0].text' } } }],
      summary: 'Look things up',
    });
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      script: byRole({
        planner: [
          heldPlan(chain, '{"tool":"audit.lookup","args":{"answer":{"$ref"', () => called('lookup').length === 1),
          repaired,
        ],
        synthesizer: ['Chained.'],
      }),
    });
    await h.steward.setReviewPreference(actor, 'none');

    await h.type('Look up one, then look up what it said');
    await h.waitFor(/=== Report \(completed\) ===\nChained\./);
    await h.steward.idle();

    // The repair call was told that s1 had started, and kept it: s1 ran once, the rest after the repair.
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'planner', 'synthesizer']);
    expect(JSON.stringify(h.llm.requests[1]!.body)).toContain('already started');
    expect(called('lookup').map((e) => e.args?.['answer'])).toEqual(['one', 'one']);
    expect(h.output()).not.toMatch(/turned out invalid/);
    expect((await onlyRun(h)).status).toBe('completed');
  });

  it('a repair that changes a step that started early stops the run, naming the step and why', async () => {
    const steps = [lookup('one'), { tool: 'audit.nope', args: {} }];
    const contradicting = JSON.stringify({ steps: [lookup('two'), lookup('three')], summary: 'Look things up' });
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      script: byRole({
        planner: [heldPlan(steps, '{"tool":"audit.nope"', () => called('lookup').length === 1), contradicting],
        synthesizer: ['Stopped.'],
      }),
    });
    await h.steward.setReviewPreference(actor, 'none');

    await h.type('Look up one, then something that does not exist');
    await h.waitFor(/=== Report \(stopped\) ===\nStopped\./);
    await h.steward.idle();

    expect(h.output()).toMatch(/step s1 started before the plan was complete/);
    expect(called('lookup').map((e) => e.args)).toEqual([{ answer: 'one' }]);
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'planner', 'synthesizer']);
    expect((await onlyRun(h)).status).toBe('stopped');
  });

  it('review all: no tool is called before approval', async () => {
    const text = JSON.stringify({ steps: [lookup('one'), lookup('two')], summary: 'Look things up' });
    h = await start('all', { text, chunks: [text.slice(0, 60), text.slice(60)], chunkDelayMs: 50 });

    await h.type('Look up one and two');
    await h.waitFor(/Type "approve", "amend/);
    expect(called('lookup')).toEqual([]);
    // Nothing could start early, so the planner's answer was not even asked for as a stream.
    expect(h.llm.requests[0]!.body['stream']).not.toBe(true);

    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===\nDone\./);
    await h.steward.idle();
    expect(called('lookup')).toHaveLength(2);
  });

  it('an open-world read-only tool is not started early; it runs once the whole plan is known', async () => {
    let searchedAtHold = -1;
    const steps = [{ tool: 'audit.search', args: { query: 'weather' } }, lookup('one')];
    const reply = heldPlan(steps, ',"summary"', () => called('lookup').length === 1, [
      () => (searchedAtHold = called('search').length),
    ]);
    h = await start('none', reply);

    await h.type('Search the weather and look up one');
    await h.waitFor(/=== Report \(completed\) ===\nDone\./);
    await h.steward.idle();

    expect(searchedAtHold).toBe(0);
    expect(called('search').map((e) => e.args)).toEqual([{ query: 'weather' }]);
    expect((await onlyRun(h)).status).toBe('completed');
  });
});

describe('a restart between the first card after early start and the decision (postgres)', () => {
  it('the next process shows the same review card once (no "Running", no "riskier"), and its approve runs the write', async () => {
    h = await start('risky', lookThenNote());
    await h.type('Look up one and two, then note it');
    await h.waitFor(/or "cancel"\./);
    const run = await onlyRun(h);
    await h.steward.shutdown();

    const { steward: next, said } = nextSteward(h);
    await next.recover();
    const cards = () => said.map((m) => JSON.parse(m) as Record<string, unknown>).filter((m) => m['kind'] === 'plan');
    await waitUntil('the card to be shown again', () => cards().length > 0);
    await next.decision({ runId: run.id, revision: 0, action: 'approve', actor });
    await waitUntil('the report', () => said.some((m) => m.includes('"kind":"report"')));
    await next.idle();
    await next.shutdown();

    expect(cards()).toHaveLength(1);
    expect(cards()[0]).toMatchObject({ needsReview: true, actions: ['approve', 'amend', 'cancel'] });
    expect(said.join('\n')).not.toMatch(/riskier than what was approved|continuing this run/);
    expect(called('note').map((e) => e.args)).toEqual([{ text: 'remember' }]);
    expect(called('lookup')).toHaveLength(2);
    expect((await h.store.getRun(run.id))?.status).toBe('completed');
  });
});

describe('tool definitions while the plan streams (console, postgres)', () => {
  it("a step that started early and changed a later step's tool cannot get the change pinned: that step waits and shows it", async () => {
    const steps = [
      { id: 'm', tool: 'audit.mutate' },
      { tool: 'audit.sleep', args: { ms: 1 }, after: ['m'] },
    ];
    const mutated = () =>
      called('mutate').length === 1 &&
      h?.host.listTools().find((t) => t.name === 'audit.sleep')?.annotations.readOnlyHint === false;
    h = await start('none', heldPlan(steps, '{"tool":"audit.sleep"', mutated), ['Stopped.']);

    await h.type('mutate then sleep');
    await h.waitFor(
      /The definition of audit\.sleep changed since approval, so step s2 waits: description: .*annotation readOnlyHint: true → false\./,
    );
    expect(called('sleep')).toEqual([]);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    expect(called('sleep')).toEqual([]);
  });
});

describe('stopping a plan being written after steps started early (console, postgres)', () => {
  it('cancel stops the started step at its server, says what had started, and the run ends stopped with a report', async () => {
    const steps = [{ tool: 'audit.sleep', args: { ms: 20_000 } }, lookup('one')];
    const reply = heldPlan(steps, '{"tool":"audit.lookup"', () => /Stopped by/.test(h?.output() ?? ''));
    h = await start('none', reply, ['Stopped early.']);

    h.typeNow('Sleep, then look up one');
    await waitUntil('the sleep to reach the server', () => called('sleep').length === 1);
    await h.type('cancel');
    await h.waitFor(/=== Report \(stopped\) ===\nStopped early\./);
    await h.steward.idle();

    const out = h.output();
    expect(out).toMatch(/Stopped by .* while it was being planned: the read-only steps that had started \(s1\)/);
    expect(out).not.toContain('Nothing was run');
    expect(
      t.audit
        .entries()
        .filter((e) => e.type === 'cancelled')
        .map((e) => e.name),
    ).toEqual(['sleep']);
    expect(called('lookup')).toEqual([]);
    // The planner call was abandoned: no repair, no second plan.
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'synthesizer']);
    expect((await onlyRun(h)).status).toBe('stopped');
  });
});

describe('a restart while the plan was being written after steps started early (postgres)', () => {
  it('the next holder marks the started step interrupted and fails the run with a clear sentence', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const steps = [{ tool: 'audit.sleep', args: { ms: 20_000 } }, lookup('one')];
    const reply = heldPlan(steps, '{"tool":"audit.lookup"', () => called('sleep').length === 1);
    h = await start('none', { ...reply, beforeChunk: (i) => (i === 1 ? released : Promise.resolve()) });

    h.typeNow('Sleep, then look up one');
    await waitUntil('the sleep to reach the server', () => called('sleep').length === 1);
    const run = await waitUntil('the step start to be stored', async () => {
      const r = await onlyRun(h!);
      return (await h!.store.listStepAttempts(r.id)).length === 1 ? r : undefined;
    });
    // This process stops as at a deploy (the run stays in planning), and the next one takes the run over.
    await h.steward.shutdown();
    release();
    const { steward: next, said } = nextSteward(h);
    await next.recover();
    // The stopped process's last write (settling the abandoned planner call's tokens) may still hold the run's row
    // when the first pass looks, and a claim skips a locked row: the next pass, a few seconds on, takes it then.
    await waitUntil(
      'the run to be taken over and failed',
      async () => (await h!.store.getRun(run.id))?.status === 'failed',
    );
    await next.shutdown();

    const [attempt] = await h.store.listStepAttempts(run.id);
    expect(attempt).toMatchObject({ stepId: 's1', status: 'failed', error: { code: 'interrupted' } });
    expect(said.join('\n')).toContain(
      'Steward restarted while writing the plan after read-only steps had started (s1); nothing more was run. Please ask again.',
    );
    expect(called('lookup')).toEqual([]);
    expect(h.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(1);
  });
});
