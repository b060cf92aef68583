import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_CAPS } from '../../../src/engine/flows/deps.ts';
import { meteredLlm, outputCapFor } from '../../../src/engine/flows/metered-llm.ts';
import type { GrantedCap, LlmRequest, LlmResponse, Ledgers, TokenRequest } from '../../../src/engine/ports.ts';
import { stewardError } from '../../helpers/steward-error.ts';

/** Two counters judged like the store judges them: a reservation goes to both or to neither, lowered to fit. */
function createBudgets(o: { perRun: number; perUserPerDay: number; runUsed?: number; userUsed?: number }) {
  const used = { run: o.runUsed ?? 0, user: o.userUsed ?? 0 };
  const reservations: TokenRequest[] = [];
  const reserve = (want: TokenRequest): Promise<GrantedCap> => {
    reservations.push(want);
    const runRoom = o.perRun - used.run - want.prompt;
    const userRoom = o.perUserPerDay - used.user - want.prompt;
    const cap = Math.min(want.output, runRoom, userRoom);
    if (cap < want.minOutput)
      return Promise.resolve({ ok: false, refusedBy: runRoom < want.minOutput ? 'run' : 'user' });
    used.run += want.prompt + cap;
    used.user += want.prompt + cap;
    if (cap === want.output) return Promise.resolve({ ok: true, cap });
    return Promise.resolve({ ok: true, cap, limitedBy: runRoom <= userRoom ? 'run' : 'user' });
  };
  const settlements: { delta: number; usage: unknown }[] = [];
  const store = {
    reserveTokens: (_run: string, _actor: unknown, want: TokenRequest) => reserve(want),
    settleTokens: (s: { delta: number; usage: unknown }) => {
      settlements.push(s);
      used.run = Math.max(0, used.run + s.delta);
      used.user = Math.max(0, used.user + s.delta);
      return Promise.resolve();
    },
  } as unknown as Ledgers;
  return { used, reservations, settlements, store, budgets: { perRun: o.perRun, perUserPerDay: o.perUserPerDay } };
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
  const metered = (b: ReturnType<typeof createBudgets>, seen: LlmRequest[]) =>
    meteredLlm({ llm: modelWriting(10, seen), store: b.store, clock: () => new Date(), budgets: b.budgets }, 'r1', ada);

  it('asks once for the prompt and the whole cap, with 256 tokens as the least worth calling with', async () => {
    const b = createBudgets({ perRun: 100_000, perUserPerDay: 1_000_000 });
    const seen: LlmRequest[] = [];
    await metered(b, seen).complete(request());
    expect(b.reservations).toEqual([{ prompt: 100, output: 16_000, minOutput: 256 }]);
    expect(seen[0]!.maxOutputTokens).toBe(16_000);
  });

  it('calls with the cap the budgets lowered, and settles once with the usage', async () => {
    const b = createBudgets({ perRun: 5_000, perUserPerDay: 1_000_000 });
    const seen: LlmRequest[] = [];
    await metered(b, seen).complete(request());
    expect(seen[0]!.maxOutputTokens).toBe(4_900);
    expect(b.settlements).toHaveLength(1);
    expect(b.settlements[0]).toMatchObject({ delta: 110 - 5_000, usage: { role: 'planner', outputTokens: 10 } });
    expect(b.used.run).toBe(110);
  });

  it('refuses, naming the budget, when not even a short answer fits, and calls no model', async () => {
    const b = createBudgets({ perRun: 1_000, perUserPerDay: 1_000_000, runUsed: 800 });
    const seen: LlmRequest[] = [];
    const err = await stewardError(metered(b, seen).complete(request()));
    expect(err.message).toBe('this run has used its budget of 1000 model tokens');
    expect(seen).toEqual([]);
    expect(b.used.run).toBe(800);
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

  it('tells onSent once the call is handed to the model, after its reservation, and never when it is refused', async () => {
    const b = createBudgets({ perRun: 20_000, perUserPerDay: 1_000_000 });
    const seen: LlmRequest[] = [];
    const order: string[] = [];
    const model = modelWriting(10, seen);
    const llm = meteredLlm(
      {
        llm: {
          complete: (r: LlmRequest) => (
            order.push(`model after ${b.reservations.length} reservation`),
            model.complete(r)
          ),
        },
        store: b.store,
        clock: () => new Date(),
      },
      'r1',
      ada,
    );
    await llm.complete(request({ role: 'butler', onSent: () => order.push('sent') }));
    expect(order).toEqual(['model after 1 reservation', 'sent']);
    // The hook is the caller's: the provider's client never sees it.
    expect(seen[0]).not.toHaveProperty('onSent');

    const poor = createBudgets({ perRun: 200, perUserPerDay: 1_000_000 });
    const refused = meteredLlm({ llm: model, store: poor.store, clock: () => new Date() }, 'r2', ada);
    const told: string[] = [];
    await expect(refused.complete(request({ onSent: () => told.push('sent') }))).rejects.toThrow();
    expect(told).toEqual([]);
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

describe('tools go to the model only with the butler role', () => {
  const tools = [{ name: 'crm__lookup', description: 'looks up', inputSchema: { type: 'object' } }];

  it('a request of any other role that carries tools is refused before a token is reserved or the model is asked', async () => {
    const b = createBudgets({ perRun: 10_000, perUserPerDay: 10_000 });
    const seen: LlmRequest[] = [];
    const llm = meteredLlm(
      { llm: modelWriting(10, seen), store: b.store, budgets: b.budgets, clock: () => new Date() },
      'r1',
      {
        id: 'u',
        channel: 'console',
      },
    );
    for (const role of ['planner', 'classifier', 'synthesizer', 'llm_step'] as const) {
      const err = await stewardError(llm.complete(request({ role, tools })));
      expect(err.message).toBe(`tools may only be offered to the butler role, not to ${role}`);
    }
    expect(b.reservations).toEqual([]);
    expect(seen).toEqual([]);
    // The butler's tools count toward the prompt it reserves.
    await llm.complete(request({ role: 'butler', tools }));
    expect(seen.map((r) => r.tools)).toEqual([tools]);
    expect(b.reservations[0]?.prompt).toBeGreaterThan(100);
  });
});
