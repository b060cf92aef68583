import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_CAPS } from '../../../src/engine/flows/deps.ts';
import { meteredLlm, outputCapFor, reserveOutputCap } from '../../../src/engine/flows/metered-llm.ts';
import type { LlmRequest, LlmResponse, RunStore } from '../../../src/engine/ports.ts';
import { stewardError } from '../../helpers/steward-error.ts';

/** Two counters judged like the store judges them: a reservation goes to both or to neither. */
function createBudgets(o: { perRun: number; perUserPerDay: number; runUsed?: number; userUsed?: number }) {
  const used = { run: o.runUsed ?? 0, user: o.userUsed ?? 0 };
  const reservations: number[] = [];
  const reserve = (tokens: number): Promise<'ok' | 'run' | 'user'> => {
    reservations.push(tokens);
    if (used.run + tokens > o.perRun) return Promise.resolve('run');
    if (used.user + tokens > o.perUserPerDay) return Promise.resolve('user');
    used.run += tokens;
    used.user += tokens;
    return Promise.resolve('ok');
  };
  const store = {
    reserveTokens: (_run: string, _actor: unknown, tokens: number) => reserve(tokens),
    adjustTokens: (_run: string, _actor: unknown, delta: number) => {
      used.run = Math.max(0, used.run + delta);
      used.user = Math.max(0, used.user + delta);
      return Promise.resolve();
    },
    recordLlmUsage: () => Promise.resolve(),
  } as unknown as RunStore;
  return { used, reservations, reserve, store, budgets: { perRun: o.perRun, perUserPerDay: o.perUserPerDay } };
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  // 400 characters of prompt: an estimate of 100 tokens.
  return {
    role: 'planner',
    system: 's'.repeat(200),
    messages: [{ role: 'user', content: 'u'.repeat(200) }],
    ...overrides,
  };
}

/** A model that honours its cap: it writes `wants` tokens, or stops at the cap. */
function modelWriting(wants: number, seen: LlmRequest[] = []) {
  return {
    complete(req: LlmRequest): Promise<LlmResponse> {
      seen.push(req);
      const cap = req.maxOutputTokens ?? Infinity;
      const output = Math.min(wants, cap);
      return Promise.resolve({
        text: 'x'.repeat(output * 4),
        model: 'm',
        usage: { inputTokens: 100, outputTokens: output },
        ...(wants > cap && { truncated: true }),
      });
    },
  };
}

const ada = { channel: 'console', id: 'ada', name: 'Ada' };

describe('the output cap a call asks for', () => {
  it("is the role's default when nothing is configured", () => {
    expect(outputCapFor({ role: 'planner' })).toBe(16_000);
    expect(outputCapFor({ role: 'synthesizer' })).toBe(DEFAULT_OUTPUT_CAPS.synthesizer);
    expect(outputCapFor({ role: 'llm_step' })).toBe(DEFAULT_OUTPUT_CAPS.llm_step);
    expect(outputCapFor({ role: 'classifier' })).toBeLessThanOrEqual(256);
  });

  it('is the configured setting of the role, and a request may ask for less but never for more', () => {
    const perCall = { planner: 8_000, classifier: 50 };
    expect(outputCapFor({ role: 'planner' }, perCall)).toBe(8_000);
    expect(outputCapFor({ role: 'planner', maxOutputTokens: 100_000 }, perCall)).toBe(8_000);
    expect(outputCapFor({ role: 'classifier', maxOutputTokens: 5 }, perCall)).toBe(5);
    expect(outputCapFor({ role: 'synthesizer' }, perCall)).toBe(DEFAULT_OUTPUT_CAPS.synthesizer);
  });
});

describe('reserving a cap from what the budgets have left', () => {
  it('takes the whole cap in one reservation when it fits', async () => {
    const b = createBudgets({ perRun: 100_000, perUserPerDay: 1_000_000 });
    expect(await reserveOutputCap(b.reserve, 100, 16_000)).toEqual({ ok: true, cap: 16_000 });
    expect(b.reservations).toEqual([16_100]);
  });

  it('lowers the cap to within 64 tokens of what is left, names the budget that lowered it, and holds no more', async () => {
    for (const [runLeft, userLeft, by] of [
      [5_000, 1_000_000, 'run'],
      [1_000_000, 3_333, 'user'],
      [900, 1_000_000, 'run'],
    ] as const) {
      const b = createBudgets({ perRun: 1_000_000, perUserPerDay: 2_000_000 });
      b.used.run = 1_000_000 - runLeft;
      b.used.user = 2_000_000 - userLeft;
      const granted = await reserveOutputCap(b.reserve, 100, 16_000);
      const left = Math.min(runLeft, userLeft) - 100;
      if (!granted.ok) throw new Error(`refused by ${granted.refusedBy}`);
      const { cap, limitedBy } = granted;
      expect(limitedBy).toBe(by);
      expect(cap).toBeLessThanOrEqual(left);
      expect(cap).toBeGreaterThan(left - 64);
      // What is held is exactly the prompt and the cap: the budgets never go past their limits.
      expect(b.used.run - (1_000_000 - runLeft)).toBe(100 + cap);
      expect(b.used.run).toBeLessThanOrEqual(1_000_000);
      expect(b.used.user).toBeLessThanOrEqual(2_000_000);
      expect(b.reservations.length).toBeLessThanOrEqual(10);
    }
  });

  it('refuses, naming the budget, when not even a short answer fits, and holds nothing', async () => {
    const b = createBudgets({ perRun: 1_000, perUserPerDay: 1_000_000, runUsed: 800 });
    expect(await reserveOutputCap(b.reserve, 100, 16_000)).toEqual({ ok: false, refusedBy: 'run' });
    expect(b.used.run).toBe(800);
    const small = createBudgets({ perRun: 1_000_000, perUserPerDay: 1_000, userUsed: 990 });
    expect(await reserveOutputCap(small.reserve, 100, 5)).toEqual({ ok: false, refusedBy: 'user' });
  });
});

describe('meteredLlm', () => {
  it('sends every call with its cap, and a model that honours it keeps usage within the budget', async () => {
    const b = createBudgets({ perRun: 20_000, perUserPerDay: 1_000_000 });
    const seen: LlmRequest[] = [];
    const llm = meteredLlm(
      { llm: modelWriting(6_000, seen), store: b.store, clock: () => new Date(), budgets: b.budgets },
      'r1',
      ada,
    );
    // 6,100 tokens each: two calls take 12,200 of 20,000; the third gets a cap lowered to what is left.
    await llm.complete(request({ role: 'llm_step' }));
    await llm.complete(request({ role: 'llm_step' }));
    await llm.complete(request({ role: 'planner' }));
    expect(seen.map((r) => r.maxOutputTokens)).toEqual([4_000, 4_000, expect.any(Number)]);
    expect(seen[2]!.maxOutputTokens).toBeGreaterThan(20_000 - 8_200 - 100 - 64);
    expect(b.used.run).toBeLessThanOrEqual(20_000);
  });

  it("passes the caller's onText on to the model, so a metered call can stream", async () => {
    const b = createBudgets({ perRun: 20_000, perUserPerDay: 1_000_000 });
    const seen: LlmRequest[] = [];
    const llm = meteredLlm({ llm: modelWriting(10, seen), store: b.store, clock: () => new Date() }, 'r1', ada);
    const pieces: string[] = [];
    await llm.complete(request({ role: 'synthesizer', onText: (d) => pieces.push(d) }));
    seen[0]?.onText?.('first words');
    expect(pieces).toEqual(['first words']);
  });

  it('blames the budget when an answer was cut at a cap the budget lowered, and still bills it', async () => {
    const b = createBudgets({ perRun: 3_000, perUserPerDay: 1_000_000 });
    const llm = meteredLlm(
      { llm: modelWriting(50_000), store: b.store, clock: () => new Date(), budgets: b.budgets },
      'r1',
      ada,
    );
    const err = await stewardError(llm.complete(request()));
    expect(err.code).toBe('limit_reached');
    expect(err.message).toMatch(
      /this run has used its budget of 3000 model tokens \(the answer was cut off at the \d+ tokens left\)/,
    );
    expect(b.used.run).toBeGreaterThan(2_800);
    expect(b.used.run).toBeLessThanOrEqual(3_000);
  });

  it("hands back an answer cut at its role's cap as truncated, for the caller to judge", async () => {
    const b = createBudgets({ perRun: 200_000, perUserPerDay: 2_000_000 });
    const llm = meteredLlm(
      { llm: modelWriting(1_310_000), store: b.store, clock: () => new Date(), budgets: b.budgets },
      'r1',
      ada,
    );
    const response = await llm.complete(request());
    expect(response.truncated).toBe(true);
    expect(response.usage.outputTokens).toBe(16_000);
    expect(b.used.run).toBe(16_100);
  });

  it('caps calls by role even with no budgets configured', async () => {
    const b = createBudgets({ perRun: 2_000_000_000, perUserPerDay: 2_000_000_000 });
    const seen: LlmRequest[] = [];
    const llm = meteredLlm({ llm: modelWriting(10, seen), store: b.store, clock: () => new Date() }, 'r1', ada);
    await llm.complete(request({ role: 'classifier', maxOutputTokens: 5 }));
    await llm.complete(request({ role: 'synthesizer' }));
    expect(seen.map((r) => r.maxOutputTokens)).toEqual([5, DEFAULT_OUTPUT_CAPS.synthesizer]);
  });

  it('gives the reservation back when the call fails', async () => {
    const b = createBudgets({ perRun: 200_000, perUserPerDay: 2_000_000 });
    const failing = { complete: () => Promise.reject(new Error('down')) };
    const llm = meteredLlm({ llm: failing, store: b.store, clock: () => new Date(), budgets: b.budgets }, 'r1', ada);
    await expect(llm.complete(request())).rejects.toThrow('down');
    expect(b.used).toEqual({ run: 0, user: 0 });
  });
});
