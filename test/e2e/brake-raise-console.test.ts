/**
 * Brakes only people can raise, end to end on the console (issue 30): with the delegation depth set to 1, a plan whose
 * delegate step asks for 2 gets 1 unless an approver raises it on the card. The card says so and offers "raise"; the
 * requester's "raise" is refused with the reason (recorded); an approver's raise is recorded with who and when, and
 * the chain it starts then reaches depth 2, where without it the grandchild is refused by the brake. Likewise ops's
 * plan handing work to clerk (granted note, which ops is not): the card says clerk's run is narrowed to ops's grants
 * and offers "widen"; the requester's is refused, an approver's is recorded, and clerk then plans and calls note.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { delegate } from './delegation-fixtures.ts';
import { createAuditServer, planReply, startHarness, type AuditServer, type Harness } from './harness.ts';

let h: Harness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

const BOSS = { id: 'boss', name: 'Boss', channel: 'console' };
const OPS_PLANS = 'You plan as the Assistant "ops"';
const CARD = /=== Plan \(revision \d+[^]*?Type "approve"[^\n]*\n/;

describe('raising the delegation depth on the card, console on postgres', () => {
  it.each([
    ['raised by an approver: the grandchild runs at depth 2', true],
    ['not raised: the grandchild is refused by the setting', false],
  ])('%s', async (_name, raise) => {
    audit = createAuditServer();
    h = await startHarness({
      db: 'postgres',
      servers: [audit.config()],
      settings: { approvers: ['console:boss'], delegation: { depth: 1, concurrency: 10, rounds: 3, messages: 5 } },
      script: byRole({
        planner: (req) => {
          const deep = { args: { assistant: 'ops', task: 'Go deeper.', depth: 2 } };
          if (!req.system.includes(OPS_PLANS)) return planReply([delegate('ask', 'Go deeper.', deep)]);
          // ops delegates once more (depth 2), then its grandchild looks up.
          const asked = h!.llm.requests.filter((r) => r.role === 'planner' && r.system.includes(OPS_PLANS)).length;
          return asked === 1
            ? planReply([delegate('deeper', 'Look it up.', deep)])
            : planReply([{ id: 'find', tool: 'audit.lookup', args: { answer: 'deep' } }]);
        },
        synthesizer: 'Done.',
      }),
    });
    const harness = h;
    for (const text of ['create ops "Operations"', 'ops grant audit allow', 'ops grant steward.delegate allow']) {
      const answer = await harness.steward.assistantCommand({
        actor: BOSS,
        conversation: { channel: 'console', key: 'boss' },
        text: `assistant ${text}`,
      });
      expect(answer.level).toBe('info');
    }
    await harness.type('review all');

    const from = harness.output().length;
    await harness.type('Go deep with ops.');
    const card = await harness.waitFor(CARD, 15_000, from);
    expect(card).toContain(
      "⚠ A step asks to hand work on 2 levels deep; the operator's setting is 1, so it gets 1 unless an approver raises the brake with Raise depth (never more than 5).",
    );
    expect(card).toContain('An approver may type "raise" to raise the delegation depth.');
    const [parent] = await harness.store.listRunsOf({ id: 'ada', channel: 'console' }, { activeOnly: true, limit: 5 });

    // The requester may decide on their run, but not loosen a brake.
    const refusedFrom = harness.output().length;
    await harness.type('raise');
    await harness.waitFor(
      /! Only an approver can raise a brake: a plan's step may ask for less than the operator's settings, never more\. This run's delegation depth stays 1\./,
      15_000,
      refusedFrom,
    );
    if (raise) {
      await harness.steward.decision({ runId: parent!.id, revision: 0, action: 'raise', actor: BOSS });
      await harness.waitFor(
        /Boss raised this run's delegation depth to 2 \(the operator's setting is 1; never more than 5\)\. Recorded\./,
        15_000,
        refusedFrom,
      );
    }
    const raises = await harness.db.db.selectFrom('brake_raises').selectAll().execute();
    expect(raises.map((r) => [r.run_id, r.brake, r.value, r.approver_id, r.approver_channel])).toEqual(
      raise ? [[parent!.id, 'depth', 2, 'boss', 'console']] : [],
    );
    const decisions = await harness.store.listDecisions(parent!.id);
    expect(decisions.map((d) => [d.actor.id, d.action, d.accepted])).toEqual([
      ['ada', 'raise', false],
      ...(raise ? [['boss', 'raise', true]] : []),
    ]);

    // Ada approves each card as it comes (under review "all" every handed-over run has one).
    let approved = 0;
    const wanted = raise ? 3 : 2;
    while (approved < wanted) {
      const at = harness.output().length;
      await harness.type('approve');
      approved += 1;
      if (approved < wanted) await harness.waitFor(CARD, 15_000, at);
    }
    await harness.waitFor(/=== Report \(\w+\) ===[^]*=== Report \(\w+\) ===/, 20_000, from);
    await harness.steward.idle();

    const rows = await harness.db.db
      .selectFrom('delegations')
      .select(['depth', 'depth_limit', 'depth_raised'])
      .orderBy('depth')
      .execute();
    const trips = await harness.db.db.selectFrom('brake_trips').select(['brake', 'cap', 'count']).execute();
    const lookups = audit.entries().filter((e) => e.type === 'call' && e.name === 'lookup');
    if (raise) {
      expect(rows).toEqual([
        { depth: 1, depth_limit: 2, depth_raised: true },
        { depth: 2, depth_limit: 2, depth_raised: true },
      ]);
      expect(trips).toEqual([]);
      expect(lookups).toHaveLength(1);
    } else {
      expect(rows).toEqual([{ depth: 1, depth_limit: 1, depth_raised: false }]);
      expect(trips).toEqual([{ brake: 'depth', cap: 1, count: 2 }]);
      expect(lookups).toHaveLength(0);
    }
  });

  it.each([
    ['widened by an approver: clerk plans with its own grants and its note reaches the server', true],
    ["not widened: clerk is bound by ops's grants too, and no note is written", false],
  ])('%s', async (_name, widen) => {
    const CLERK_PLANS = 'You plan as the Assistant "clerk"';
    audit = createAuditServer();
    h = await startHarness({
      db: 'postgres',
      servers: [audit.config()],
      settings: { approvers: ['console:boss'] },
      script: byRole({
        planner: (req) =>
          req.system.includes(CLERK_PLANS)
            ? planReply([{ id: 'write', tool: 'audit.note', args: { text: 'x' } }])
            : planReply([{ ...delegate('ask', 'Write a note.'), args: { assistant: 'clerk', task: 'Write a note.' } }]),
        synthesizer: 'Done.',
      }),
    });
    const harness = h;
    // ops may look up and hand work on; clerk may write notes, which ops may not.
    for (const text of [
      'create ops "Operations"',
      'ops grant audit.lookup allow',
      'ops grant steward.delegate allow',
      'create clerk "Notes"',
      'clerk grant audit.note allow',
    ]) {
      const answer = await harness.steward.assistantCommand({
        actor: BOSS,
        conversation: { channel: 'console', key: 'boss' },
        text: `assistant ${text}`,
      });
      expect(answer.level).toBe('info');
    }
    await harness.type('review all');

    const from = harness.output().length;
    await harness.type('ask ops: have clerk write a note');
    const card = await harness.waitFor(CARD, 15_000, from);
    expect(card).toContain(
      '⚠ This plan hands work to clerk: that run may use only the tools ops is granted too (delegation narrows), unless an approver widens it to its own grants with Widen grants.',
    );
    const [parent] = await harness.store.listRunsOf({ id: 'ada', channel: 'console' }, { activeOnly: true, limit: 5 });
    const refusedFrom = harness.output().length;
    await harness.type('widen');
    await harness.waitFor(
      /! Only an approver can widen grants: a run handed from ops to clerk stays bound by the grants of both\./,
      15_000,
      refusedFrom,
    );
    if (widen) {
      await harness.steward.decision({ runId: parent!.id, revision: 0, action: 'widen', actor: BOSS });
      await harness.waitFor(
        /Boss let the runs this one hands to clerk use their own grants, not only those ops has too\. Recorded\./,
        15_000,
        refusedFrom,
      );
    }
    const rows = await harness.db.db.selectFrom('brake_raises').select(['brake', 'approver_id']).execute();
    expect(rows).toEqual(widen ? [{ brake: 'grants', approver_id: 'boss' }] : []);

    const at = harness.output().length;
    await harness.type('approve');
    await waitUntil("clerk's planner to be asked", () =>
      harness.llm.requests.some((r) => r.system.includes(CLERK_PLANS)),
    );
    if (widen) {
      // clerk's own plan may name note: it gets its own card, and once approved the note reaches the server.
      await harness.waitFor(CARD, 15_000, at);
      await harness.type('approve');
    }
    await waitUntil(
      'every run to end',
      async () => {
        const runs = await harness.db.db.selectFrom('runs').select('status').execute();
        return runs.length === 2 && runs.every((r) => ['completed', 'failed', 'stopped'].includes(r.status));
      },
      { timeoutMs: 30_000 },
    );
    const notes = audit.entries().filter((e) => e.type === 'call' && e.name === 'note');
    expect(notes).toHaveLength(widen ? 1 : 0);
    const statuses = await harness.db.db
      .selectFrom('runs')
      .select(['assistant', 'status'])
      .orderBy('created_at')
      .execute();
    expect(statuses.map((r) => r.assistant)).toEqual(['ops', 'clerk']);
    expect(statuses[1]!.status).toBe(widen ? 'completed' : 'failed');
  });
});
