/**
 * Spend caps end to end on the console (issue 30): a run whose estimate would pass what is left of a channel's daily
 * cap does not start and then fail midway; its card says what it would spend and that it waits for an approver. The
 * requester's Approve is refused with the reason; an approver's Approve runs it past the cap (recorded), and
 * `spend` shows the day's spend against the cap. Yesterday's spend is history for the estimate, not today's spend.
 * A model call the cap refuses mid-run pauses the run with the step waiting; an approver's Resume goes past the cap.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PricedModel } from '../../src/engine/model-cost.ts';
import { NO_SPEND_CAPS } from '../../src/engine/spend.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { auditStdioConfig, everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let folder: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (folder) await rm(folder, { recursive: true, force: true });
  folder = undefined;
});

// The planner is priced; the synthesizer's model is not, so its tokens count at the default price ($15 a million).
const prices: PricedModel[] = [
  {
    name: 'planner',
    model: 'planner-model',
    prices: { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0 },
  },
];
const DAY_MS = 86_400_000;
/** $0.50 a day for the channel. */
const caps = { ...NO_SPEND_CAPS, channel: { day: 500_000, month: null } };

describe.each(['postgres', 'pglite'] as const)('spend caps on the console, end to end on %s', (db) => {
  it("a run over what is left of a cap waits for an approver: the requester's Approve is refused, an approver's runs it", async () => {
    let skew = -DAY_MS;
    h = await startHarness({
      db,
      servers: [everythingStdioConfig()],
      script: byRole({
        // Planner: 1,000 × $2 + 200 × $8 per million = 3,600 micro-dollars a plan.
        planner: {
          text: planReply([{ id: 'echo', tool: 'everything.echo', args: { message: 'hi' } }]),
          usage: { input: 1_000, output: 200 },
        },
        // The report: 43,000 tokens at the default $15 per million = 645,000 micro-dollars.
        synthesizer: { text: 'Echoed hi.', usage: { input: 40_000, output: 3_000 } },
      }),
      settings: {
        modelPrices: prices,
        approvers: ['console:boss'],
        spend: { caps, defaultPricePerMillion: 15 },
      },
      clock: () => new Date(Date.now() + skew),
      estimates: true,
      modelStreams: false,
    });
    const harness = h;

    // Yesterday: the first run starts at once (low risk) and spends $0.6486, its history.
    await harness.type('Echo hi.');
    await harness.waitFor(/=== Report \(completed\) ===\nEchoed hi\./);
    await harness.steward.idle();

    // Today: after planning ($0.0036) $0.4964 is left of $0.50; the report alone is estimated at $0.6450.
    skew = 0;
    const from = harness.output().length;
    await harness.type('Echo hi again.');
    const card = await harness.waitFor(/=== Plan \(revision 0[\s\S]*?Type "approve"[^\n]*\n/, 15_000, from);
    expect(card).toContain('Spend: $0.6450 more · left: this channel $0.4964 of $0.50 today');
    expect(card).toContain(
      "⚠ This run would spend up to $0.6450, more than the $0.4964 left of this channel's daily spend cap of $0.50: it waits for an approver.",
    );
    const runId = (await harness.store.listRunsOf({ id: 'ada', channel: 'console' }, { activeOnly: true, limit: 5 }))[0]
      ?.id;
    expect((await harness.store.getRun(runId ?? ''))?.status).toBe('awaiting_review');

    // The requester may decide on their run, but not past a cap.
    const refusedFrom = harness.output().length;
    await harness.type('approve');
    await harness.waitFor(
      /! This run would spend up to \$0\.6450, more than the \$0\.4964 left of this channel's daily spend cap of \$0\.50: only an approver can approve it\./,
      15_000,
      refusedFrom,
    );
    expect((await harness.store.getRun(runId ?? ''))?.status).toBe('awaiting_review');
    expect(harness.calls.filter((c) => c.name === 'everything.echo')).toHaveLength(1);

    // An approver's Approve (pressed by another person, as on Slack or Discord) runs it past the cap.
    await harness.steward.decision({
      runId: runId ?? '',
      revision: 0,
      action: 'approve',
      actor: { id: 'boss', name: 'Boss', channel: 'console' },
    });
    await harness.waitFor(
      /Approved by Boss past this channel's daily spend cap of \$0\.50; running 1 steps\./,
      15_000,
      from,
    );
    await harness.waitFor(/=== Report \(completed\) ===\nEchoed hi\./, 15_000, from);
    await harness.steward.idle();
    expect(harness.calls.filter((c) => c.name === 'everything.echo')).toHaveLength(2);
    const decisions = await harness.store.listDecisions(runId ?? '');
    expect(decisions.map((d) => [d.actor.id, d.action, d.accepted])).toEqual([
      ['ada', 'approve', false],
      ['boss', 'approve', true],
    ]);
    const exempt = await harness.db.db
      .selectFrom('runs')
      .select('spend_exempt')
      .where('id', '=', runId ?? '')
      .executeTakeFirst();
    expect(exempt?.spend_exempt).toBe(true);

    // `spend`: today's $0.6486 against the $0.50 cap (the approver let it pass), yesterday's not counted.
    const spendFrom = harness.output().length;
    await harness.type('spend');
    await harness.waitFor(/Caps are set by the operator[^\n]*\n/, 15_000, spendFrom);
    const answer = harness.output().slice(spendFrom);
    expect(answer).toContain('This channel: $0.6486 today, $');
    expect(answer).toContain('cap $0.50 a day ($0.00 left)');
    expect(answer).toContain('(An approver sees every channel and person.)');
    expect(harness.llm.failures).toEqual([]);
  });

  it("a model call the cap refuses mid-run pauses the run, saying why; anyone's Resume asks again, an approver's goes past", async () => {
    // The llm step's prompt alone is 10,000 tokens: $0.15 at the default price, more than the $0.10 cap holds.
    const prompt = 'x '.repeat(20_000);
    h = await startHarness({
      db,
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: {
          text: planReply([{ id: 'sum', kind: 'llm', args: { prompt } }]),
          usage: { input: 1_000, output: 200 },
        },
        llm_step: { text: 'Summed up.', usage: { input: 10_000, output: 100 } },
        synthesizer: { text: 'Summed up.', usage: { input: 500, output: 50 } },
      }),
      settings: {
        modelPrices: prices,
        approvers: ['console:boss'],
        // A short plan: its reservation (prompt and 300 tokens at $8 per million) fits the cap.
        budgets: { perRun: 1_000_000, perUserPerDay: 10_000_000, perCall: { planner: 300 } },
        spend: { caps: { ...NO_SPEND_CAPS, channel: { day: 100_000, month: null } }, defaultPricePerMillion: 15 },
      },
    });
    const harness = h;
    await harness.type('Sum it up.');
    const held =
      /sum did not run: this channel's daily spend cap of \$0\.10 is used up \(\$0\.0964 left\)\. The run is paused: an approver's Resume lets it go past the spend caps/;
    await harness.waitFor(held);
    const runId =
      (await harness.store.listRunsOf({ id: 'ada', channel: 'console' }, { activeOnly: true, limit: 5 }))[0]?.id ?? '';
    expect((await harness.store.getRun(runId))?.status).toBe('paused');
    expect(harness.llm.requests.filter((r) => r.role === 'llm_step')).toHaveLength(0);

    // The requester's Resume asks again: still over the cap, so it pauses again, and says so again.
    const again = harness.output().length;
    await harness.type('resume');
    await harness.waitFor(held, 15_000, again);
    expect((await harness.store.getRun(runId))?.status).toBe('paused');

    // An approver's Resume lets it go past the cap: the step runs and the run reports.
    await harness.steward.decision({
      runId,
      revision: 0,
      action: 'resume',
      actor: { id: 'boss', name: 'Boss', channel: 'console' },
    });
    await harness.waitFor(/Resumed past the spend caps\. \(Boss\)/, 15_000, again);
    await harness.waitFor(/=== Report \(completed\) ===\nSummed up\./, 15_000, again);
    expect(harness.llm.requests.filter((r) => r.role === 'llm_step')).toHaveLength(1);
    expect(harness.llm.failures).toEqual([]);
  });

  it('a plan whose read-only steps started while it was written waits too, and only an approver starts the rest', async () => {
    folder = await mkdtemp(join(tmpdir(), 'steward-spend-'));
    let skew = -DAY_MS;
    h = await startHarness({
      db,
      servers: [auditStdioConfig(join(folder, 'audit.jsonl'))],
      script: byRole({
        planner: {
          text: planReply([
            { id: 'look', tool: 'audit.lookup', args: { answer: 'hi' } },
            { id: 'say', kind: 'llm', args: { prompt: 'Say hi.' }, dependsOn: ['look'] },
          ]),
          usage: { input: 1_000, output: 200 },
        },
        // 110 tokens at the default price: 1,650 micro-dollars.
        llm_step: { text: 'Hi.', usage: { input: 100, output: 10 } },
        synthesizer: { text: 'Looked up hi.', usage: { input: 40_000, output: 3_000 } },
      }),
      settings: { modelPrices: prices, approvers: ['console:boss'], spend: { caps, defaultPricePerMillion: 15 } },
      clock: () => new Date(Date.now() + skew),
      estimates: true,
    });
    const harness = h;
    await harness.type('Look up hi.');
    await harness.waitFor(/=== Report \(completed\) ===\nLooked up hi\./);
    await harness.steward.idle();

    skew = 0;
    const from = harness.output().length;
    await harness.type('Look up hi again.');
    const card = await harness.waitFor(/=== Plan \(revision 0[\s\S]*?Type "approve"[^\n]*\n/, 15_000, from);
    expect(card).toContain('look started while the plan was written');
    expect(card).toContain("it waits for an approver. Only an approver's Approve starts it");
    const runId =
      (await harness.store.listRunsOf({ id: 'ada', channel: 'console' }, { activeOnly: true, limit: 5 }))[0]?.id ?? '';
    await harness.type('approve');
    await harness.waitFor(
      /! This run would spend up to \$0\.646\d, [^\n]*only an approver can approve it\./,
      15_000,
      from,
    );
    expect((await harness.store.getRun(runId))?.status).toBe('awaiting_review');
    await harness.steward.decision({
      runId,
      revision: 0,
      action: 'approve',
      actor: { id: 'boss', channel: 'console' },
    });
    await harness.waitFor(/=== Report \(completed\) ===\nLooked up hi\./, 15_000, from);
    expect(harness.llm.failures).toEqual([]);
  });
});
