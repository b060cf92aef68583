/**
 * Brakes only people can raise, end to end on the console (issue 30): with the delegation depth set to 1, a plan whose
 * delegate step asks for 2 gets 1 unless an approver raises it on the card. The card says so and offers "raise"; the
 * requester's "raise" is refused with the reason (recorded); an approver's raise is recorded with who and when, and
 * the chain it starts then reaches depth 2, where without it the grandchild is refused by the brake.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
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
});
