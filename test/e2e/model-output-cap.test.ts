/**
 * Issue 11, item 4: a hijacked planner answers with 5 MB. Through the console, the real engine, the real openai SDK
 * and PostgreSQL: every call carries its output cap, the budgets are billed at most one cap past what they hold,
 * and the person is told the plan is too large (not that a budget ran out).
 */
import { describe, expect, it } from 'vitest';
import { tokens, type FakeLlmScript, type RecordedRequest } from '../fakes/fake-llm-server.ts';
import { type Harness, useAuditHarness } from './harness.ts';

const t = useAuditHarness();
let h: Harness | undefined;

/** Five megabytes of plan that never ends. */
const FIVE_MB = `{"summary": "${'a'.repeat(5 * 1024 * 1024)}`;

const capOf = (req: RecordedRequest) => req.body['max_completion_tokens'] as number | undefined;

/** A model that writes 5 MB and, like OpenAI's, stops at `max_completion_tokens` with finish_reason 'length'. */
const honoursItsCap: FakeLlmScript = (req) => {
  const cap = capOf(req);
  return cap === undefined ? FIVE_MB : { text: FIVE_MB.slice(0, cap * 4), stopReason: 'length' };
};

/** Tokens billed to the one run and to ada today, as the database holds them. */
async function billed(harness: Harness): Promise<{ run: number; person: number; recorded: number }> {
  const run = await harness.db.db.selectFrom('runs').select('tokens_used').executeTakeFirstOrThrow();
  const person = await harness.db.db.selectFrom('user_daily_tokens').select('tokens').executeTakeFirst();
  const usage = await harness.db.db.selectFrom('llm_usage').select(['input_tokens', 'output_tokens']).execute();
  const recorded = usage.reduce((n, u) => n + u.input_tokens + u.output_tokens, 0);
  return { run: run.tokens_used, person: person?.tokens ?? 0, recorded };
}

describe('a planner that answers with 5 MB (postgres)', () => {
  it('is cut at the planner cap of 16,000 tokens, billed within the run budget, and refused for its size', async () => {
    const budgets = { perRun: 200_000, perUserPerDay: 2_000_000 };
    h = await t.start({ db: 'postgres', servers: [t.audit.config()], settings: { budgets }, script: honoursItsCap });
    await h.type('note something');
    const shown = await h.waitFor(/✖ I could not make a valid plan: [^\n]*/);

    expect(shown).toMatch(
      /the plan is too large: the planner's answer reached the limit of one answer \(16,000 tokens/,
    );
    expect(shown).not.toMatch(/budget/);
    // One call: a plan cut at its cap is not worth a repair.
    expect(h.llm.requests.map((r) => [r.role, capOf(r)])).toEqual([['planner', 16_000]]);
    const tokensBilled = await billed(h);
    expect(tokensBilled.run).toBe(tokensBilled.recorded);
    expect(tokensBilled.person).toBe(tokensBilled.recorded);
    expect(tokensBilled.run).toBeLessThanOrEqual(16_000 + tokens(h.llm.requests[0]!.system) + 100);
    expect(tokensBilled.run).toBeLessThanOrEqual(budgets.perRun);
    console.info(`5 MB planner answer, capped: ${tokensBilled.run} tokens billed`);
  });

  it('near the end of a run budget gets a cap lowered to what is left, stays within it, and is told the budget cut it', async () => {
    const budgets = { perRun: 6_000, perUserPerDay: 2_000_000 };
    h = await t.start({ db: 'postgres', servers: [t.audit.config()], settings: { budgets }, script: honoursItsCap });
    await h.type('note something');
    // The budget stopped the answer: no plan was judged, so the sentence does not call it an invalid one.
    const shown = await h.waitFor(/✖ I could not plan this request: [^\n]*/);

    expect(shown).toMatch(
      /this run has used its budget of 6000 model tokens \(the answer was cut off at the \d+ tokens left\)/,
    );
    const cap = capOf(h.llm.requests[0]!)!;
    expect(h.llm.requests).toHaveLength(1);
    expect(cap).toBeLessThan(6_000);
    expect(cap).toBeGreaterThan(1_000);
    const tokensBilled = await billed(h);
    expect(tokensBilled.run).toBe(tokensBilled.recorded);
    expect(tokensBilled.run).toBeLessThanOrEqual(budgets.perRun + cap);
  });

  it('from a server that ignores the cap is still refused for its size after one call, and billed what it reports', async () => {
    const budgets = { perRun: 200_000, perUserPerDay: 2_000_000 };
    h = await t.start({ db: 'postgres', servers: [t.audit.config()], settings: { budgets }, script: () => FIVE_MB });
    await h.type('note something');
    const shown = await h.waitFor(/✖ I could not make a valid plan: [^\n]*/);

    const size = FIVE_MB.length.toLocaleString('en-US');
    expect(shown).toContain(
      `the plan is too large: the planner's answer is ${size} characters, over the limit of 200,000`,
    );
    expect(h.llm.requests.map((r) => [r.role, capOf(r)])).toEqual([['planner', 16_000]]);
    // The provider's bill is the truth, even when it broke the cap: the budget records it and refuses what follows.
    const tokensBilled = await billed(h);
    expect(tokensBilled.run).toBe(tokensBilled.recorded);
    expect(tokensBilled.run).toBeGreaterThan(1_300_000);
    console.info(`5 MB planner answer, cap ignored by the server: ${tokensBilled.run} tokens billed`);
  });
});
