/** Spend caps' arithmetic (pure): windows, prices before and after a call, a card's outlook, and their words. */
import { describe, expect, it } from 'vitest';
import { spendLine, spendReportText, spendWaitText } from '../../src/bot/spend-words.ts';
import type { EstimateHistoryData } from '../../src/engine/estimate-history.ts';
import { spendApproval } from '../../src/engine/flows/spend-check.ts';
import { chargeMicroUsd, pricesOrDefault, requestPrices, type PricedModel } from '../../src/engine/model-cost.ts';
import { dispatchTransition, startDispatch } from '../../src/engine/run/dispatch.ts';
import { createDispatchState } from '../../src/engine/run/dispatch-state.ts';
import { estimatePlan } from '../../src/engine/run/estimates.ts';
import { restoreDispatch } from '../../src/engine/run/restore.ts';
import {
  formatUsd,
  spendChannelKey,
  spendOutlook,
  spendWindows,
  type SpendReport,
  type SpendWindowTotal,
} from '../../src/engine/spend.ts';
import { validatePlan } from '../../src/engine/plan/validate-plan.ts';
import type { StepError } from '../../src/engine/types.ts';
import { createAttempt, createPlan, createPolicies, createTool } from './fixtures.ts';

const mini: PricedModel = {
  name: 'mini',
  model: 'gpt-4.1-mini',
  prices: { inputPerMillion: 0.4, outputPerMillion: 1.6, cachedInputPerMillion: 0.1 },
};

describe('spend windows', () => {
  it('are the UTC day and the first day of the UTC month, whatever the local clock says', () => {
    expect(spendWindows(new Date('2026-12-31T23:30:00-02:00'))).toEqual({ day: '2027-01-01', month: '2027-01-01' });
    expect(spendWindows(new Date('2026-02-28T12:00:00Z'))).toEqual({ day: '2026-02-28', month: '2026-02-01' });
  });

  it('count a run for its chat channel (the place a thread is in), else its conversation', () => {
    expect(spendChannelKey({ channel: 'slack', key: 'C1:1700000000.000100' }, 'C1')).toBe('slack:C1');
    expect(spendChannelKey({ channel: 'console', key: 'console' })).toBe('console:console');
  });
});

describe('prices before and after a call', () => {
  it("prices a request by the catalog model it names, else by its role's model; the butler by the classifier's", () => {
    const roles = { classifier: { model: 'gpt-4.1-mini' }, planner: { model: 'llama3.1' } };
    expect(requestPrices({ role: 'llm_step', model: 'mini' }, [mini], roles)).toEqual(mini.prices);
    expect(requestPrices({ role: 'classifier' }, [mini], roles)).toEqual(mini.prices);
    expect(requestPrices({ role: 'butler' }, [mini], roles)).toEqual(mini.prices);
    expect(requestPrices({ role: 'planner' }, [mini], roles)).toBeUndefined();
    expect(requestPrices({ role: 'synthesizer' }, [mini], roles)).toBeUndefined();
  });

  it('charges a model without a price its tokens at the default price, never nothing', () => {
    const usage = { inputTokens: 10_000, outputTokens: 2_000, cachedInputTokens: 4_000 };
    // 6,000 × 0.4 + 4,000 × 0.1 + 2,000 × 1.6 = 6,000 micro-dollars.
    expect(chargeMicroUsd(usage, mini.prices, 15)).toBe(6_000);
    // Every token at $15 per million, cached or not: 12,000 × 15 = 180,000.
    expect(chargeMicroUsd(usage, undefined, 15)).toBe(180_000);
    expect(pricesOrDefault(undefined, 2.5)).toEqual({
      inputPerMillion: 2.5,
      outputPerMillion: 2.5,
      cachedInputPerMillion: 2.5,
    });
  });

  it('estimates what a run would spend once planned: the planner left out, an unpriced model at the default', () => {
    const tools = [createTool('srv.read')];
    const v = validatePlan(
      createPlan([
        { id: 'a', tool: 'srv.read' },
        { id: 'b', kind: 'llm', args: { prompt: 'sum up' }, dependsOn: ['a'] },
      ]),
      tools,
    );
    if (!v.ok) throw new Error(v.error.join('; '));
    const range = (low: number, high: number) => ({ low, high });
    const history: EstimateHistoryData = {
      tools: {},
      roles: {
        planner: { input: range(5_000, 9_000), output: range(500, 900), samples: 3, model: 'gpt-4.1-mini' },
        synthesizer: { input: range(1_000, 2_000), output: range(100, 200), samples: 3, model: 'gpt-4.1-mini' },
        llm_step: { input: range(300, 500), output: range(50, 100), samples: 3, model: 'local-llama' },
      },
    };
    const e = estimatePlan(v.value, history, [mini], { defaultPricePerMillion: 10 });
    // Synthesizer at the catalog's price: 1,000 × 0.4 + 100 × 1.6 = 560 (high 1,120); the llm step at $10: 3,500
    // (high 6,000). The planner's spend is already charged when a card is shown.
    expect(e.spendMicroUsd).toEqual({ low: 4_060, high: 7_120 });
    expect(e.costMicroUsd).toBeNull();
  });
});

describe("a card's spend outlook", () => {
  const total = (
    scope: SpendWindowTotal['scope'],
    period: SpendWindowTotal['period'],
    spent: number,
    cap: number | null,
  ): SpendWindowTotal => ({ scope, period, spentMicroUsd: spent, capMicroUsd: cap });
  const totals = [
    total('workspace', 'day', 40_000_000, 100_000_000),
    total('workspace', 'month', 900_000_000, null),
    total('channel', 'day', 4_990_000, 5_000_000),
    total('channel', 'month', 4_990_000, null),
    total('person', 'day', 1_000, null),
    total('person', 'month', 1_000, 20_000_000),
  ];

  it('is nothing without a cap', () => {
    expect(
      spendOutlook(
        { low: 1, high: 2 },
        totals.map((t) => ({ ...t, capMicroUsd: null })),
        false,
      ),
    ).toBeNull();
  });

  it('lists the capped windows tightest first, and names the first one the high estimate would pass', () => {
    const o = spendOutlook({ low: 2_000, high: 12_000 }, totals, false);
    expect(o?.windows.map((w) => `${w.scope}-${w.period}`)).toEqual(['channel-day', 'person-month', 'workspace-day']);
    expect(o?.over).toMatchObject({ scope: 'channel', period: 'day' });
    // The low end fits the $0.01 left; the high end does not: the run waits rather than stop midway.
    expect(spendOutlook({ low: 2_000, high: 10_000 }, totals, false)?.over).toBeNull();
    expect(spendOutlook({ low: 2_000, high: 12_000 }, totals, true)?.over).toBeNull();
    expect(spendOutlook(null, totals, false)?.over).toBeNull();
  });

  it("is said on the card beside the estimate, and the wait where the card's warnings are", () => {
    const o = spendOutlook({ low: 2_000, high: 12_000 }, totals, false);
    if (!o) throw new Error('no outlook');
    expect(spendLine(o)).toBe(
      'Spend: $0.0020–$0.0120 more · left: this channel $0.01 of $5.00 today, the requester $19.9990 of $20.00 this month, the workspace $60.00 of $100.00 today',
    );
    expect(spendWaitText(o)).toBe(
      "This run would spend up to $0.0120, more than the $0.01 left of this channel's daily spend cap of $5.00: it waits for an approver. Only an approver's Approve starts it (and lets it go past the caps).",
    );
    expect(spendWaitText({ ...o, over: null })).toBeNull();
  });

  it("lets only an approver's Approve start a run over a cap, and exempts it; a requester hears why not", () => {
    const o = spendOutlook({ low: 2_000, high: 12_000 }, totals, false) ?? undefined;
    const ada = { id: 'ada', name: 'Ada', channel: 'slack' };
    const boss = { id: 'boss', channel: 'slack' };
    const settings = { approvers: ['slack:boss'] };
    expect(spendApproval(o, ada, settings, ada)).toEqual({
      ok: false,
      refusal:
        "This run would spend up to $0.0120, more than the $0.01 left of this channel's daily spend cap of $5.00: only an approver can approve it.",
    });
    expect(spendApproval(o, boss, settings, ada)).toEqual({
      ok: true,
      exempt: true,
      cap: "this channel's daily spend cap of $5.00",
    });
    expect(spendApproval(undefined, ada, settings, ada)).toEqual({ ok: true, exempt: false });
  });

  it('formats whole cents in cents, and anything else to a hundredth of a cent, so nothing is rounded up to a cap', () => {
    expect([0, 100, 9_999, 10_000, 12_340_000, 19_999_000].map(formatUsd)).toEqual([
      '$0.00',
      '$0.0001',
      '$0.0100',
      '$0.01',
      '$12.34',
      '$19.9990',
    ]);
  });
});

describe('/steward spend in words', () => {
  const report: SpendReport = {
    windows: { day: '2026-12-05', month: '2026-12-01' },
    totals: [
      { scope: 'workspace', period: 'day', spentMicroUsd: 1_200_000, capMicroUsd: 5_000_000 },
      { scope: 'workspace', period: 'month', spentMicroUsd: 15_000_000, capMicroUsd: null },
      { scope: 'channel', period: 'day', spentMicroUsd: 0, capMicroUsd: null },
      { scope: 'channel', period: 'month', spentMicroUsd: 2_000_000, capMicroUsd: null },
      { scope: 'person', period: 'day', spentMicroUsd: 600_000, capMicroUsd: null },
      { scope: 'person', period: 'month', spentMicroUsd: 4_000_000, capMicroUsd: 10_000_000 },
    ],
    byChannel: [{ key: 'slack:C123', dayMicroUsd: 1_200_000, monthMicroUsd: 15_000_000 }],
    byPerson: [{ key: 'slack:U1', name: 'Ada', dayMicroUsd: 600_000, monthMicroUsd: 4_000_000 }],
    byModel: [{ key: 'gpt-4.1', dayMicroUsd: 1_200_000, monthMicroUsd: 15_000_000 }],
    narrowed: false,
  };

  it('gives the caps with what is left, then spend by channel, person and model', () => {
    expect(spendReportText(report)).toBe(
      [
        'Spend on models in US dollars, today (2026-12-05, UTC) and this month (2026-12):',
        'Workspace: $1.20 today, $15.00 this month · cap $5.00 a day ($3.80 left)',
        'This channel: $0.00 today, $2.00 this month · no cap',
        'You: $0.60 today, $4.00 this month · cap $10.00 a month ($6.00 left)',
        'By channel:',
        '• #C123: $1.20 today, $15.00 this month',
        'By person:',
        '• Ada: $0.60 today, $4.00 this month',
        'By model:',
        '• gpt-4.1: $1.20 today, $15.00 this month',
        'Caps are set by the operator (STEWARD_SPEND_* settings); a model without a price counts at the default price.',
      ].join('\n'),
    );
  });

  it('to someone who is not an approver, says that an approver sees every channel and person', () => {
    expect(spendReportText({ ...report, narrowed: true })).toContain('(An approver sees every channel and person.)');
    expect(spendReportText({ ...report, narrowed: true })).toContain('Your calls by model:');
  });
});

describe('a model call a spend cap refused mid-run', () => {
  const capped: StepError = {
    code: 'spend_capped',
    message: "this channel's daily spend cap of $5.00 is used up ($0.0010 left)",
    retryable: false,
  };
  const plan = createPlan([
    { id: 'sum', kind: 'llm', args: { prompt: 'sum up' } },
    { id: 'after', tool: 'srv.read', dependsOn: ['sum'] },
  ]);
  const start = () =>
    startDispatch(createDispatchState(plan, createPolicies(plan), { maxParallel: 4, maxAttempts: 3 }));

  it('pauses the run with the step waiting (nothing was sent), instead of failing it; a resume asks again', () => {
    let t = dispatchTransition(start().state, { type: 'stepFailed', stepId: 'sum', attempt: 1, error: capped });
    expect(t.effects).toEqual([
      {
        type: 'recordStepEnd',
        stepId: 'sum',
        attempt: 1,
        status: 'failed',
        detail: `Not run: ${capped.message}. The run is paused: an approver's resume lets it go past the spend caps, or stop.`,
        error: capped,
      },
      { type: 'holdInterrupted', stepId: 'sum', error: capped },
    ]);
    expect(t.state).toMatchObject({ phase: 'paused', haltedBy: null });
    expect(t.state.steps.sum).toMatchObject({ status: 'pending' });
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(t.effects).toEqual([expect.objectContaining({ type: 'startStep', attempt: 2 })]);
  });

  it('is still waiting after a restart, the run paused, not failed', () => {
    const attempts = [createAttempt('sum', { status: 'failed', error: capped })];
    const r = restoreDispatch(plan, createPolicies(plan), attempts, 'paused', {
      maxParallel: 4,
      maxAttempts: 3,
      approvedRisk: 'low',
      breakpoints: [],
    });
    expect(r.state.phase).toBe('paused');
    expect(r.state.steps.sum).toMatchObject({ status: 'pending', attempt: 1 });
  });
});
