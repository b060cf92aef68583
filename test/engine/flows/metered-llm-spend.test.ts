/** The metered client and spend caps: what it reserves in money before a call, and what it settles after. */
import { describe, expect, it } from 'vitest';
import { meteredLlm } from '../../../src/engine/flows/metered-llm.ts';
import type { PricedModel } from '../../../src/engine/model-cost.ts';
import type { GrantedCap, Ledgers, LlmRequest, LlmResponse } from '../../../src/engine/ports.ts';
import { NO_SPEND_CAPS, type SpendRequest } from '../../../src/engine/spend.ts';
import { stewardError } from '../../helpers/steward-error.ts';

const mini: PricedModel = {
  name: 'mini',
  model: 'gpt-4.1-mini',
  prices: { inputPerMillion: 0.4, outputPerMillion: 1.6, cachedInputPerMillion: 0.1 },
};

/** A ledger that grants what it is told to, and keeps what it was asked and settled. */
function ledger(answer: (spend: SpendRequest) => GrantedCap) {
  const reserved: SpendRequest[] = [];
  const settled: Parameters<Ledgers['settleTokens']>[0][] = [];
  const store = {
    reserveTokens: (_r: string, _a: unknown, _w: unknown, _b: unknown, _d: string, spend: SpendRequest) => {
      reserved.push(spend);
      return Promise.resolve(answer(spend));
    },
    settleTokens: (s: Parameters<Ledgers['settleTokens']>[0]) => {
      settled.push(s);
      return Promise.resolve();
    },
  } as unknown as Ledgers;
  return { store, reserved, settled };
}

function model(response: Partial<LlmResponse> = {}, seen: LlmRequest[] = []) {
  return {
    complete(req: LlmRequest): Promise<LlmResponse> {
      seen.push(req);
      return Promise.resolve({
        text: 'ok',
        model: 'gpt-4.1-mini',
        usage: { inputTokens: 100, outputTokens: 50 },
        ...response,
      });
    },
  };
}

// 400 characters: a prompt of 100 tokens.
const request = (o: Partial<LlmRequest> = {}): LlmRequest => ({
  role: 'llm_step',
  system: 's'.repeat(200),
  messages: [{ role: 'user', content: 'u'.repeat(200) }],
  ...o,
});
const ada = { channel: 'slack', id: 'U1', name: 'Ada' };
const clock = () => new Date('2026-12-05T10:00:00Z');
const caps = { ...NO_SPEND_CAPS, channel: { day: 5_000_000, month: null } };

describe('a metered call and the spend caps', () => {
  it("reserves at the role's model's prices (the default for a model without any), in the day's and month's windows", async () => {
    const l = ledger(() => ({ ok: true, cap: 4_000, spendMicroUsd: 6_440 }));
    const spend = { caps, defaultPricePerMillion: 20, roleModels: { llm_step: { model: 'gpt-4.1-mini' } } };
    const llm = meteredLlm({ llm: model(), store: l.store, clock, prices: [mini], spend }, 'r1', ada);
    await llm.complete(request());
    await llm.complete(request({ role: 'synthesizer' }));
    expect(l.reserved).toEqual([
      { price: { input: 0.4, output: 1.6 }, caps, windows: { day: '2026-12-05', month: '2026-12-01' } },
      { price: { input: 20, output: 20 }, caps, windows: { day: '2026-12-05', month: '2026-12-01' } },
    ]);
  });

  it('settles the spend to what the call charged, with the charge on its usage; a failed call gives it all back', async () => {
    const l = ledger(() => ({ ok: true, cap: 4_000, spendMicroUsd: 6_440 }));
    const spend = { caps, defaultPricePerMillion: 20 };
    // The answering model has no price: 150 tokens at $20 per million = 3,000 micro-dollars.
    const unpriced = model({ model: 'local-llama' });
    await meteredLlm({ llm: unpriced, store: l.store, clock, prices: [mini], spend }, 'r1', ada).complete(request());
    expect(l.settled[0]).toMatchObject({
      usage: { costMicroUsd: null, chargedMicroUsd: 3_000 },
      spend: { delta: 3_000 - 6_440, windows: { day: '2026-12-05', month: '2026-12-01' } },
    });
    const failing = { complete: () => Promise.reject(new Error('down')) };
    const llm = meteredLlm({ llm: failing, store: l.store, clock, prices: [mini], spend }, 'r1', ada);
    await expect(llm.complete(request())).rejects.toThrow('down');
    expect(l.settled[1]).toMatchObject({ usage: null, spend: { delta: -6_440 } });
  });

  it('refuses a call a spend cap holds no room for, naming the cap and what is left, and calls no model', async () => {
    const l = ledger(() => ({ ok: false, refusedBy: 'channel-day', leftMicroUsd: 1_000 }));
    const seen: LlmRequest[] = [];
    const llm = meteredLlm(
      { llm: model({}, seen), store: l.store, clock, spend: { caps, defaultPricePerMillion: 15 } },
      'r1',
      ada,
    );
    const err = await stewardError(llm.complete(request()));
    expect(err.code).toBe('spend_capped');
    expect(err.message).toBe("this channel's daily spend cap of $5.00 is used up ($0.0010 left)");
    expect(seen).toEqual([]);
    const personal = ledger(() => ({ ok: false, refusedBy: 'person-month', leftMicroUsd: 0 }));
    const monthly = { ...NO_SPEND_CAPS, person: { day: null, month: 20_000_000 } };
    const err2 = await stewardError(
      meteredLlm(
        { llm: model(), store: personal.store, clock, spend: { caps: monthly, defaultPricePerMillion: 15 } },
        'r1',
        ada,
      ).complete(request()),
    );
    expect(err2.message).toBe("Ada's monthly spend cap of $20.00 is used up ($0.00 left)");
  });

  it('blames the spend cap when an answer was cut at a cap it lowered', async () => {
    const l = ledger(() => ({ ok: true, cap: 300, limitedBy: 'workspace-month', spendMicroUsd: 520 }));
    const caps2 = { ...NO_SPEND_CAPS, workspace: { day: null, month: 100_000_000 } };
    const llm = meteredLlm(
      { llm: model({ truncated: true }), store: l.store, clock, spend: { caps: caps2, defaultPricePerMillion: 15 } },
      'r1',
      ada,
    );
    const err = await stewardError(llm.complete(request()));
    expect(err.code).toBe('spend_capped');
    expect(err.message).toBe(
      "the workspace's monthly spend cap of $100.00 is used up (the answer was cut off at the 300 tokens left)",
    );
  });
});
